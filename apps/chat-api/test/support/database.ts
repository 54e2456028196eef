import { randomBytes } from "node:crypto";
import { Client } from "pg";
import { createDatabase, type Database } from "../../src/db/database";
import { migrate } from "../../src/db/migrate";

/** Which database this jest project runs on (see jest.config.js). */
export const TEST_DB_KIND: "pglite" | "postgres" =
  (globalThis as { __TEST_DB__?: "pglite" | "postgres" }).__TEST_DB__ ?? "pglite";

async function adminQuery(url: string, text: string): Promise<void> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

/** A test file's database; `replica` opens a second connection pool to the same data (PostgreSQL only). */
export interface TestDatabase extends Database {
  replica?: () => Promise<Database>;
}

/**
 * A database of its own for one test file, with every migration applied: an
 * in-memory PGlite, or a new schema on TEST_DATABASE_URL that `close` drops.
 */
export async function freshDatabase(): Promise<TestDatabase> {
  if (TEST_DB_KIND === "pglite") {
    const db = await createDatabase({ kind: "pglite" });
    await migrate(db.sql);
    return db;
  }
  const url = process.env.TEST_DATABASE_URL;
  if (url === undefined || url === "")
    throw new Error("the postgres project needs TEST_DATABASE_URL");
  const schema = `t_${process.pid}_${randomBytes(4).toString("hex")}`;
  await adminQuery(url, `CREATE SCHEMA ${schema}`);
  const db = await createDatabase({ kind: "postgres", url, schema, poolSize: 4 });
  await migrate(db.sql);
  let closing: Promise<void> | undefined;
  return {
    ...db,
    replica: () => createDatabase({ kind: "postgres", url, schema, poolSize: 4 }),
    close() {
      closing ??= db.close().then(() => adminQuery(url, `DROP SCHEMA ${schema} CASCADE`));
      return closing;
    },
  };
}
