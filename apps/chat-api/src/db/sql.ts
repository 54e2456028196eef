import type { PGlite } from "@electric-sql/pglite";
import type { Pool, PoolClient } from "pg";

/** A row of a raw query. */
export type Row = Record<string, unknown>;

/** One connection, held for a sequence of statements (a transaction, an advisory lock). */
export interface SqlSession {
  query<T extends Row = Row>(text: string, params?: readonly unknown[]): Promise<T[]>;
  /** Runs a script of several statements (a migration file). */
  exec(script: string): Promise<void>;
}

/**
 * Raw SQL beside Prisma, for what Prisma does not do: migrations, advisory
 * locks, LISTEN/NOTIFY and readiness checks. Both drivers speak PostgreSQL.
 */
export interface SqlRunner extends SqlSession {
  /** Runs `work` on one connection of its own. */
  withSession<T>(work: (session: SqlSession) => Promise<T>): Promise<T>;
  /** Calls `onMessage` for every NOTIFY on `channel`; resolves to the unsubscribe function. */
  listen(channel: string, onMessage: (payload: string) => void): Promise<() => Promise<void>>;
}

function quoteIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

function sessionOf(client: Pool | PoolClient): SqlSession {
  return {
    async query<T extends Row>(text: string, params: readonly unknown[] = []) {
      return (await client.query<T>(text, [...params])).rows;
    },
    async exec(script) {
      await client.query(script);
    },
  };
}

/** Raw SQL over a node-postgres pool (the one Prisma's adapter uses too). */
export function pgRunner(pool: Pool): SqlRunner {
  return {
    ...sessionOf(pool),
    async withSession(work) {
      const client = await pool.connect();
      try {
        return await work(sessionOf(client));
      } finally {
        client.release();
      }
    },
    async listen(channel, onMessage) {
      const client = await pool.connect();
      client.on("notification", (message) => {
        if (message.channel === channel) onMessage(message.payload ?? "");
      });
      await client.query(`LISTEN ${quoteIdentifier(channel)}`);
      return async () => {
        await client.query(`UNLISTEN ${quoteIdentifier(channel)}`);
        client.release();
      };
    },
  };
}

/** Raw SQL over an embedded PGlite database (one connection, shared with Prisma). */
export function pgliteRunner(db: PGlite): SqlRunner {
  const session: SqlSession = {
    async query<T extends Row>(text: string, params: readonly unknown[] = []) {
      return (await db.query<T>(text, [...params])).rows;
    },
    async exec(script) {
      await db.exec(script);
    },
  };
  return {
    ...session,
    withSession: (work) => work(session),
    listen: (channel, onMessage) => db.listen(channel, onMessage),
  };
}
