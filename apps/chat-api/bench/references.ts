/**
 * The benchmark's two references (fixtures, not product code), one process each:
 *
 * - `BENCH_REFERENCE=ceiling`: bare Express 5 with the body parser chat-api
 *   uses, answering a fixed success envelope on every path (the framework's
 *   ceiling on this machine);
 * - `BENCH_REFERENCE=pg`: bare Express 5 with the same body parser, each
 *   measured operation written directly with `pg`, sending the statements
 *   chat-api sends for it (the texts Kysely compiles from its own builders in
 *   src/db/queries, compiled once and checked against the parameters given
 *   here, then sent as plain text), on a connection pool of the same size, with no
 *   authentication (chat-api's comes from a cache and sends nothing), no Prisma
 *   and no middleware. The benchmark compares its answers with chat-api's
 *   before any load.
 *
 * Both listen on PORT; `pg` reads DATABASE_URL, BENCH_CALLER (the caller's user
 * id) and CHAT_EXTERNAL_URL.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { CHAT_FEATURE_LEVEL } from "@repo/feature-levels";
import { isDeepStrictEqual } from "node:util";
import express from "express";
import {
  DummyDriver,
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type Compilable,
} from "kysely";
import { Pool, type PoolClient } from "pg";
import { channelVisibilityQuery } from "../src/db/queries/channels";
import { draftCheckQuery, updateDraftQuery } from "../src/db/queries/drafts";
import { EVENTS_CHANNEL, LOG_NOTICE, appendEventsQuery } from "../src/db/queries/events";
import { intArrayLiteral } from "../src/db/queries/text";
import { markReadBatchQuery } from "../src/db/queries/flags";
import { realmPresencesQuery } from "../src/db/queries/presence";
import { groupMembershipQuery } from "../src/db/queries/user-groups";
import type { DB } from "../src/gen/kysely/tables";

const VERSION = (
  JSON.parse(readFileSync(join(__dirname, "../package.json"), "utf8")) as { version: string }
).version;
const PRESENCE_HISTORY_DAYS = 14;
const MARK_READ_BATCH = 1000;

const app = express();
app.disable("x-powered-by");
app.set("etag", false);
app.use(express.urlencoded({ extended: false, limit: 1024 * 1024, parameterLimit: 1000 }));

const success = { result: "success", msg: "" };

/** Kysely that only compiles (it runs nothing). */
const compiler = new Kysely<DB>({
  dialect: {
    createAdapter: () => new PostgresAdapter(),
    createDriver: () => new DummyDriver(),
    createIntrospector: (db) => new PostgresIntrospector(db),
    createQueryCompiler: () => new PostgresQueryCompiler(),
  },
});

/**
 * One of chat-api's statements as plain text and parameters: compiled by Kysely
 * on the first call, whose parameters must be exactly `params(...args)`; later
 * calls send the same text with `params(...args)`, no builder involved.
 */
function statement<A extends unknown[]>(
  build: (q: Kysely<DB>, ...args: A) => Compilable,
  params: (...args: A) => unknown[],
): (...args: A) => [string, unknown[]] {
  let text: string | undefined;
  return (...args) => {
    const values = params(...args);
    if (text === undefined) {
      const compiled = build(compiler, ...args).compile();
      if (!isDeepStrictEqual([...compiled.parameters], values))
        throw new Error(`parameters differ from chat-api's: ${compiled.sql}`);
      text = compiled.sql;
    }
    return [text, values];
  };
}

const GROUP_MEMBERSHIP = statement(
  (q, group: number, realm: number, user: number) =>
    groupMembershipQuery(q, group, realm, user, false),
  (group, realm, user) => [group, realm, group, realm, user, realm, user, true],
);
const REALM_PRESENCES = statement(
  (q, realm: number, since: Date) => realmPresencesQuery(q, realm, since, undefined),
  (realm, since) => [realm, since, true, false],
);
const DRAFT_CHECK = statement(draftCheckQuery, (user: number, draft: number) => [draft, user]);
const CHANNEL_VISIBILITY = statement(channelVisibilityQuery, (channel: number, user: number) => [
  user,
  channel,
]);
const DRAFT_UPDATE = statement(
  (
    q,
    user: number,
    draft: number,
    type: "stream",
    to: number[],
    topic: string,
    content: string,
    at: Date,
  ) => updateDraftQuery(q, user, draft, { type, to, topic, content, last_edit_time: at }),
  (user, draft, type, to, topic, content, at) => [type, to, topic, content, at, draft, user],
);
const MARK_READ_BATCH_SQL = statement(
  (q, user: number, limit: number) => markReadBatchQuery(q, 1n, user, limit),
  (user, limit) => ["1", user, user, "1", "0", limit],
);
const SEND_EVENT = statement(
  (q, users: number[], type: string, payload: string) =>
    appendEventsQuery(q, [{ userIds: users, type, payload, span: 1 }]),
  (users, type, payload) => [
    intArrayLiteral(users),
    type,
    payload,
    1,
    EVENTS_CHANNEL,
    LOG_NOTICE,
    1,
  ],
);

async function transaction<T>(pool: Pool, work: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query("BEGIN");
    const result = await work(client);
    await client.query("COMMIT");
    return result;
  } catch (error) {
    await client.query("ROLLBACK");
    throw error;
  } finally {
    client.release();
  }
}

function pgReference(): void {
  const pool = new Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
  const callerId = Number(process.env.BENCH_CALLER);
  const external = new URL(process.env.CHAT_EXTERNAL_URL ?? "http://localhost:9991");
  const seconds = (date: Date): number => Math.floor(date.getTime() / 1000);

  // chat-api keeps the realm in a cache: read once, as its first request does.
  const realm = pool
    .query<{
      id: number;
      name: string;
      description: string;
      email_auth_enabled: boolean;
      password_auth_enabled: boolean;
      icon_url: string | null;
    }>("SELECT * FROM realms WHERE subdomain = ''")
    .then(({ rows: [row] }) => {
      if (row === undefined) throw new Error("no root realm");
      return row;
    });

  app.get("/api/v1/server_settings", async (_req, res) => {
    const r = await realm;
    const escaped = r.description
      .replaceAll("&", "&amp;")
      .replaceAll("<", "&lt;")
      .replaceAll(">", "&gt;")
      .replaceAll('"', "&quot;")
      .replaceAll("'", "&#x27;");
    res.json({
      ...success,
      authentication_methods: {
        password: r.password_auth_enabled,
        dev: false,
        email: false,
        ldap: false,
        remoteuser: false,
        github: false,
        azuread: false,
        gitlab: false,
        apple: false,
        google: false,
        saml: false,
        "openid connect": false,
        discord: false,
      },
      external_authentication_methods: [],
      chat_feature_level: CHAT_FEATURE_LEVEL,
      chat_version: VERSION,
      chat_merge_base: VERSION,
      zulip_feature_level: CHAT_FEATURE_LEVEL,
      zulip_version: VERSION,
      zulip_merge_base: VERSION,
      push_notifications_enabled: false,
      is_incompatible: false,
      email_auth_enabled: r.email_auth_enabled,
      require_email_format_usernames: true,
      realm_uri: external.origin,
      realm_url: external.origin,
      realm_name: r.name,
      realm_icon: r.icon_url ?? `${external.origin}/static/images/default-realm-icon.png`,
      realm_description: `<p>${escaped}</p>`,
      realm_web_public_access_enabled: false,
    });
  });

  app.get("/api/v1/user_groups/:group/members/:user", async (req, res) => {
    const { id: realmId } = await realm;
    const { rows } = await pool.query<{
      group_found: boolean;
      user_found: boolean;
      member: boolean;
    }>(...GROUP_MEMBERSHIP(Number(req.params.group), realmId, Number(req.params.user)));
    const [row] = rows;
    if (row?.group_found !== true || !row.user_found) {
      res.status(400).json({ result: "error", msg: "Invalid user group", code: "BAD_REQUEST" });
      return;
    }
    res.json({ ...success, is_user_group_member: row.member });
  });

  app.get("/api/v1/realm/presence", async (_req, res) => {
    const { id: realmId } = await realm;
    const since = new Date(Date.now() - PRESENCE_HISTORY_DAYS * 86_400_000);
    const { rows } = await pool.query<{
      email: string;
      last_connected_time: Date;
      last_active_time: Date | null;
    }>(...REALM_PRESENCES(realmId, since));
    const presences: Record<string, unknown> = {};
    for (const p of rows) {
      const entry = {
        client: "website",
        status:
          p.last_active_time !== null && p.last_active_time >= p.last_connected_time
            ? "active"
            : "idle",
        timestamp: seconds(p.last_connected_time),
      };
      presences[p.email] = { website: { ...entry, pushable: false }, aggregated: entry };
    }
    res.json({ ...success, presences, server_timestamp: Date.now() / 1000 });
  });

  app.patch("/api/v1/drafts/:id", async (req, res) => {
    const draftId = Number(req.params.id);
    const body = req.body as Record<string, string>;
    const draft = JSON.parse(body.draft ?? "") as {
      type: string;
      to: number[];
      topic: string;
      content: string;
      timestamp?: number;
    };
    const {
      rows: [found],
    } = await pool.query<{ sync: boolean; draft: number | null }>(
      ...DRAFT_CHECK(callerId, draftId),
    );
    if (found?.sync !== true || found.draft === null) throw new Error("no draft");
    await pool.query(...CHANNEL_VISIBILITY(draft.to[0] ?? 0, callerId));
    const lastEdit = new Date((draft.timestamp ?? Date.now() / 1000) * 1000);
    await transaction(pool, async (client) => {
      const {
        rows: [row],
      } = await client.query<{ id: number; to: number[]; topic: string; content: string }>(
        ...DRAFT_UPDATE(
          callerId,
          draftId,
          "stream",
          draft.to,
          draft.topic,
          draft.content.trim(),
          lastEdit,
        ),
      );
      if (row === undefined) throw new Error("no draft");
      const event = {
        type: "drafts",
        op: "update",
        draft: {
          id: row.id,
          type: draft.type,
          to: row.to,
          topic: row.topic,
          content: row.content,
          timestamp: seconds(lastEdit),
        },
      };
      await client.query(...SEND_EVENT([callerId], "drafts", JSON.stringify(event)));
    });
    res.json(success);
  });

  app.post("/api/v1/mark_all_as_read", async (_req, res) => {
    for (;;) {
      const marked = await transaction(pool, async (client) => {
        const { rows } = await client.query<{ message_id: number }>(
          ...MARK_READ_BATCH_SQL(callerId, MARK_READ_BATCH),
        );
        if (rows.length > 0) {
          const event = {
            type: "update_message_flags",
            op: "add",
            operation: "add",
            flag: "read",
            messages: rows.map((r) => r.message_id).sort((a, b) => a - b),
            all: false,
          };
          await client.query(...SEND_EVENT([callerId], event.type, JSON.stringify(event)));
        }
        return rows.length;
      });
      if (marked < MARK_READ_BATCH) break;
    }
    res.json({ ...success, complete: true });
  });
}

if (process.env.BENCH_REFERENCE === "pg") {
  pgReference();
} else {
  app.use((_req, res) => {
    res.json(success);
  });
}

app.listen(Number(process.env.PORT), "127.0.0.1");
