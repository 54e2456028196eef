/**
 * schema.prisma and the migrations must describe the same database. This
 * applies every migration to an empty database, reads the catalog, and compares
 * it with Prisma's own reading of schema.prisma (its DMMF): tables, columns,
 * types, nullability, defaults, enums, indexes, unique constraints and foreign
 * keys. A change to one without the other fails here.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { get_dmmf } from "@prisma/prisma-schema-wasm";
import type { Database } from "../src/db/database";
import { freshDatabase } from "./support/database";

interface DmmfField {
  name: string;
  dbName?: string | null;
  kind: "scalar" | "object" | "enum";
  type: string;
  isList: boolean;
  isRequired: boolean;
  nativeType: [string, string[]] | null;
  default?: { name: string; args: unknown[] } | string | number | boolean | unknown[];
  relationFromFields?: string[];
  relationToFields?: string[];
  relationOnDelete?: string;
  relationOnUpdate?: string;
}
interface DmmfModel {
  name: string;
  dbName: string | null;
  fields: DmmfField[];
}
interface DmmfIndex {
  model: string;
  type: "id" | "unique" | "normal" | "fulltext";
  dbName?: string | null;
  fields: { name: string }[];
}
interface Dmmf {
  datamodel: {
    models: DmmfModel[];
    enums: { name: string; values: { name: string }[] }[];
    indexes: DmmfIndex[];
  };
}

const schemaText = readFileSync(join(__dirname, "../prisma/schema.prisma"), "utf8");
const dmmf = JSON.parse(
  get_dmmf(JSON.stringify({ prismaSchema: [["schema.prisma", schemaText]] })),
) as Dmmf;
const { models, enums, indexes } = dmmf.datamodel;
const tableOf = (model: string): string => {
  const found = models.find((m) => m.name === model);
  if (found === undefined) throw new Error(`no model ${model}`);
  return found.dbName ?? found.name;
};
const columnOf = (model: string, field: string): string =>
  models.find((m) => m.name === model)?.fields.find((f) => f.name === field)?.dbName ?? field;

/**
 * What schema.prisma cannot say (expression and partial indexes), written in
 * the migrations by hand: index name -> definition as pg_get_indexdef prints it.
 */
const SQL_ONLY_INDEXES: Record<string, string> = {
  users_realm_id_lower_email_key:
    "CREATE UNIQUE INDEX users_realm_id_lower_email_key ON users USING btree (realm_id, lower((email)::text))",
  users_realm_id_lower_delivery_email_key:
    "CREATE UNIQUE INDEX users_realm_id_lower_delivery_email_key ON users USING btree (realm_id, lower((delivery_email)::text))",
  channels_realm_id_lower_name_key:
    "CREATE UNIQUE INDEX channels_realm_id_lower_name_key ON channels USING btree (realm_id, lower((name)::text))",
  channel_folders_realm_id_lower_name_key:
    "CREATE UNIQUE INDEX channel_folders_realm_id_lower_name_key ON channel_folders USING btree (realm_id, lower((name)::text))",
  user_topics_user_id_channel_id_lower_topic_name_key:
    "CREATE UNIQUE INDEX user_topics_user_id_channel_id_lower_topic_name_key ON user_topics USING btree (user_id, channel_id, lower((topic_name)::text))",
  messages_channel_id_lower_topic_id_idx:
    "CREATE INDEX messages_channel_id_lower_topic_id_idx ON messages USING btree (channel_id, lower((topic)::text), id)",
  alert_words_user_id_lower_word_key:
    "CREATE UNIQUE INDEX alert_words_user_id_lower_word_key ON alert_words USING btree (user_id, lower((word)::text))",
  event_log_unsequenced_idx:
    "CREATE INDEX event_log_unsequenced_idx ON event_log USING btree (id) WHERE (seq IS NULL)",
  custom_emoji_realm_id_name_live_key:
    "CREATE UNIQUE INDEX custom_emoji_realm_id_name_live_key ON custom_emoji USING btree (realm_id, name) WHERE (NOT deactivated)",
  user_messages_unread_idx:
    "CREATE INDEX user_messages_unread_idx ON user_messages USING btree (user_id, message_id) WHERE ((flags & (1)::bigint) = 0)",
  user_messages_mentions_idx:
    "CREATE INDEX user_messages_mentions_idx ON user_messages USING btree (message_id) WHERE ((flags & (24)::bigint) <> 0)",
};

/** The catalog type a field maps to, as information_schema spells it. */
function expectedType(model: string, field: DmmfField): string {
  if (field.isList) return `ARRAY ${field.type === "Int" ? "_int4" : "_text"}`;
  if (field.kind === "enum") return `USER-DEFINED ${field.type}`;
  const [native, args] = field.nativeType ?? [null, []];
  if (native === "VarChar") return `character varying(${args[0]})`;
  if (native === "Timestamptz") return `timestamp with time zone(${args[0]})`;
  if (native === "Char") return `character(${args[0]})`;
  if (native === "SmallInt") return "smallint";
  if (native !== null)
    throw new Error(`${model}.${field.name}: add native type ${native} to this test`);
  const plain: Record<string, string> = {
    Int: "integer",
    BigInt: "bigint",
    Boolean: "boolean",
    String: "text",
    Bytes: "bytea",
    Json: "jsonb",
    DateTime: "timestamp without time zone(3)",
  };
  const type = plain[field.type];
  if (type === undefined)
    throw new Error(`${model}.${field.name}: add type ${field.type} to this test`);
  return type;
}

/** The column default as the catalog prints it. */
function expectedDefault(table: string, column: string, field: DmmfField): string | null {
  const value = field.default;
  if (value === undefined) return null;
  if (typeof value === "object" && !Array.isArray(value)) {
    if (value.name === "autoincrement") return `nextval('${table}_${column}_seq'::regclass)`;
    if (value.name === "now") return "CURRENT_TIMESTAMP";
    throw new Error(`${table}.${column}: add default ${value.name} to this test`);
  }
  if (typeof value === "boolean") return String(value);
  if (typeof value === "number" || field.type === "BigInt" || field.type === "Int") {
    // pg prints a negative literal with a cast: '-1'::integer.
    const n = String(value);
    return n.startsWith("-") ? `'${n}'::${field.type === "BigInt" ? "bigint" : "integer"}` : n;
  }
  if (typeof value === "string") {
    const literal = `'${value.replaceAll("'", "''")}'`;
    if (field.kind === "enum") return `${literal}::"${field.type}"`;
    if (field.type === "Json") return `${literal}::jsonb`;
    return field.nativeType?.[0] === "VarChar"
      ? `${literal}::character varying`
      : `${literal}::text`;
  }
  throw new Error(`${table}.${column}: add a list default to this test`);
}

let db: Database;

beforeAll(async () => {
  db = await freshDatabase();
});

afterAll(() => db.close());

describe("schema.prisma and the migrations agree", () => {
  it("on the tables", async () => {
    const rows = await db.sql.query<{ table_name: string }>(
      `SELECT table_name FROM information_schema.tables
       WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' AND table_name <> '_prisma_migrations'`,
    );
    expect(rows.map((r) => r.table_name).sort()).toEqual(
      models.map((m) => m.dbName ?? m.name).sort(),
    );
  });

  it("on the enums and their values", async () => {
    const rows = await db.sql.query<{ typname: string; labels: string[] }>(
      `SELECT t.typname, array_agg(e.enumlabel::text ORDER BY e.enumsortorder) AS labels
       FROM pg_type t JOIN pg_enum e ON e.enumtypid = t.oid JOIN pg_namespace n ON n.oid = t.typnamespace
       WHERE n.nspname = current_schema() GROUP BY t.typname`,
    );
    const actual = Object.fromEntries(rows.map((r) => [r.typname, r.labels]));
    const expected = Object.fromEntries(enums.map((e) => [e.name, e.values.map((v) => v.name)]));
    expect(actual).toEqual(expected);
  });

  it("on every column: type, nullability and default", async () => {
    const rows = await db.sql.query<{
      table_name: string;
      column_name: string;
      data_type: string;
      udt_name: string;
      character_maximum_length: number | null;
      datetime_precision: number | null;
      is_nullable: string;
      column_default: string | null;
    }>(
      `SELECT table_name, column_name, data_type, udt_name, character_maximum_length, datetime_precision,
              is_nullable, column_default
       FROM information_schema.columns
       WHERE table_schema = current_schema() AND table_name <> '_prisma_migrations'`,
    );
    const describe = (r: (typeof rows)[number]): string => {
      const type =
        r.data_type === "ARRAY" || r.data_type === "USER-DEFINED"
          ? `${r.data_type} ${r.udt_name}`
          : r.data_type === "character varying" || r.data_type === "character"
            ? `${r.data_type}(${r.character_maximum_length})`
            : r.data_type.startsWith("timestamp")
              ? `${r.data_type}(${r.datetime_precision})`
              : r.data_type;
      return `${r.table_name}.${r.column_name} ${type} ${r.is_nullable === "YES" ? "NULL" : "NOT NULL"} default=${r.column_default}`;
    };
    const expected = models.flatMap((model) => {
      const table = model.dbName ?? model.name;
      return model.fields
        .filter((f) => f.kind !== "object")
        .map((f) => {
          const column = f.dbName ?? f.name;
          // Prisma creates scalar lists without NOT NULL.
          const nullable = !f.isRequired || f.isList;
          return `${table}.${column} ${expectedType(model.name, f)} ${nullable ? "NULL" : "NOT NULL"} default=${expectedDefault(table, column, f)}`;
        });
    });
    expect(rows.map(describe).sort()).toEqual(expected.sort());
  });

  it("on indexes, primary keys and unique constraints", async () => {
    const rows = await db.sql.query<{ indexname: string; indexdef: string }>(
      `SELECT indexname, indexdef FROM pg_indexes
       WHERE schemaname = current_schema() AND tablename <> '_prisma_migrations'`,
    );
    const actual = Object.fromEntries(
      rows.map((r) => [r.indexname, r.indexdef.replace(/ ON [a-z0-9_]+\./, " ON ")]),
    );
    const quote = (column: string): string =>
      /^[a-z_][a-z0-9_]*$/.test(column) && !["order", "to"].includes(column)
        ? column
        : `"${column}"`;
    const expected: Record<string, string> = { ...SQL_ONLY_INDEXES };
    for (const index of indexes) {
      const table = tableOf(index.model);
      const columns = index.fields.map((f) => columnOf(index.model, f.name));
      const suffix = { id: "pkey", unique: "key", normal: "idx", fulltext: "idx" }[index.type];
      const name =
        index.dbName ??
        (index.type === "id" ? `${table}_pkey` : `${table}_${columns.join("_")}_${suffix}`);
      const unique = index.type === "normal" ? "" : "UNIQUE ";
      expected[name] =
        `CREATE ${unique}INDEX ${name} ON ${table} USING btree (${columns.map(quote).join(", ")})`;
    }
    expect(actual).toEqual(expected);
  });

  it("on foreign keys: columns, targets and actions", async () => {
    const rows = await db.sql.query<{ conname: string; definition: string }>(
      `SELECT c.conname, pg_get_constraintdef(c.oid) AS definition
       FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace
       WHERE c.contype = 'f' AND n.nspname = current_schema()`,
    );
    const actual = Object.fromEntries(
      rows.map((r) => [r.conname, r.definition.replace(/REFERENCES [a-z0-9_]+\./, "REFERENCES ")]),
    );
    const action: Record<string, string> = {
      Cascade: "CASCADE",
      SetNull: "SET NULL",
      Restrict: "RESTRICT",
      NoAction: "NO ACTION",
      SetDefault: "SET DEFAULT",
    };
    const expected: Record<string, string> = {};
    for (const model of models) {
      for (const field of model.fields) {
        const from = field.relationFromFields ?? [];
        if (field.kind !== "object" || from.length === 0) continue;
        const table = model.dbName ?? model.name;
        const columns = from.map((f) => columnOf(model.name, f));
        const target = tableOf(field.type);
        const targetColumns = (field.relationToFields ?? []).map((f) => columnOf(field.type, f));
        const onDelete = field.relationOnDelete ?? (field.isRequired ? "Restrict" : "SetNull");
        const onUpdate = field.relationOnUpdate ?? "Cascade";
        // pg prints NO ACTION by leaving the clause out.
        const clause = (verb: string, rule: string) =>
          rule === "NoAction" ? "" : ` ON ${verb} ${action[rule]}`;
        expected[`${table}_${columns.join("_")}_fkey`] =
          `FOREIGN KEY (${columns.join(", ")}) REFERENCES ${target}(${targetColumns.join(", ")})` +
          `${clause("UPDATE", onUpdate)}${clause("DELETE", onDelete)}`;
      }
    }
    expect(actual).toEqual(expected);
  });
});
