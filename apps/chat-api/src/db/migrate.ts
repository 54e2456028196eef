import { createHash } from "node:crypto";
import { randomUuid } from "../lib/random-key";
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import type { SqlRunner, SqlSession } from "./sql";

/** Where the migrations live, from `src/db` and from `dist/db` alike. */
export const MIGRATIONS_DIR = join(__dirname, "../../prisma/migrations");

/** Any 64-bit number unique to this purpose: the advisory lock replicas take while migrating. */
const MIGRATION_LOCK = 7_243_911_067;

/** Prisma Migrate's own bookkeeping table, created the way Prisma creates it. */
const BOOKKEEPING = `
CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
    "id"                    VARCHAR(36) PRIMARY KEY NOT NULL,
    "checksum"              VARCHAR(64) NOT NULL,
    "finished_at"           TIMESTAMPTZ,
    "migration_name"        VARCHAR(255) NOT NULL,
    "logs"                  TEXT,
    "rolled_back_at"        TIMESTAMPTZ,
    "started_at"            TIMESTAMPTZ NOT NULL DEFAULT now(),
    "applied_steps_count"   INTEGER NOT NULL DEFAULT 0
)`;

/** One migration directory: `<timestamp>_<name>/migration.sql`. */
export interface MigrationFile {
  name: string;
  sql: string;
  /** SHA-256 (hex) of the file, as Prisma records it. */
  checksum: string;
}

/** A migration that was applied with other contents than the file has now. */
export class MigrationDriftError extends Error {
  override readonly name = "MigrationDriftError";
}

/** The migrations in `dir`, oldest first. */
export async function readMigrations(dir = MIGRATIONS_DIR): Promise<MigrationFile[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const names = entries
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort();
  return Promise.all(
    names.map(async (name) => {
      const sql = await readFile(join(dir, name, "migration.sql"), "utf8");
      return { name, sql, checksum: createHash("sha256").update(sql).digest("hex") };
    }),
  );
}

interface AppliedRow {
  migration_name: string;
  checksum: string;
  finished_at: Date | null;
  rolled_back_at: Date | null;
  [key: string]: unknown;
}

async function applyPending(
  session: SqlSession,
  migrations: readonly MigrationFile[],
): Promise<string[]> {
  await session.exec(BOOKKEEPING);
  const rows = await session.query<AppliedRow>(
    `SELECT migration_name, checksum, finished_at, rolled_back_at FROM "_prisma_migrations"`,
  );
  const done = new Map(
    rows
      .filter((r) => r.finished_at !== null && r.rolled_back_at === null)
      .map((r) => [r.migration_name, r]),
  );
  const applied: string[] = [];
  for (const migration of migrations) {
    const previous = done.get(migration.name);
    if (previous !== undefined) {
      if (previous.checksum !== migration.checksum) {
        throw new MigrationDriftError(
          `migration ${migration.name} was changed after it was applied; add a new migration instead`,
        );
      }
      continue;
    }
    const id = randomUuid();
    // One transaction per migration: it applies whole or not at all.
    await session.exec("BEGIN");
    try {
      await session.query(
        `INSERT INTO "_prisma_migrations" (id, checksum, migration_name, started_at, applied_steps_count)
         VALUES ($1, $2, $3, now(), 0)`,
        [id, migration.checksum, migration.name],
      );
      await session.exec(migration.sql);
      await session.query(
        `UPDATE "_prisma_migrations" SET finished_at = now(), applied_steps_count = 1 WHERE id = $1`,
        [id],
      );
      await session.exec("COMMIT");
    } catch (error) {
      await session.exec("ROLLBACK");
      throw error;
    }
    applied.push(migration.name);
  }
  return applied;
}

/** Runs in this process one after another per database: PGlite has one connection, so its advisory lock cannot. */
const queues = new WeakMap<SqlRunner, Promise<unknown>>();

/**
 * Applies every pending migration, recording each in `_prisma_migrations` as
 * Prisma Migrate does. Replicas starting together queue on an advisory lock
 * (and callers in one process on a queue), so each migration runs once.
 * Returns the names applied now.
 */
export async function migrate(sql: SqlRunner, dir = MIGRATIONS_DIR): Promise<string[]> {
  const migrations = await readMigrations(dir);
  const run = (): Promise<string[]> =>
    sql.withSession(async (session) => {
      await session.query("SELECT pg_advisory_lock($1)", [MIGRATION_LOCK]);
      try {
        return await applyPending(session, migrations);
      } finally {
        await session.query("SELECT pg_advisory_unlock($1)", [MIGRATION_LOCK]);
      }
    });
  const previous = queues.get(sql) ?? Promise.resolve();
  const result = previous.then(run, run);
  queues.set(
    sql,
    result.catch(() => undefined),
  );
  return result;
}
