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

/**
 * Raw SQL over a node-postgres pool (the one Prisma's adapter uses too).
 * `stopListening` gives back the connections LISTEN holds: the pool does not end while one is out.
 */
export function pgRunner(pool: Pool): SqlRunner & { stopListening(): Promise<void> } {
  const listeners = new Set<() => Promise<void>>();
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
      const stop = async (): Promise<void> => {
        if (!listeners.delete(stop)) return;
        try {
          await client.query(`UNLISTEN ${quoteIdentifier(channel)}`);
          client.release();
        } catch (error) {
          client.release(error instanceof Error ? error : true);
        }
      };
      listeners.add(stop);
      return stop;
    },
    async stopListening() {
      await Promise.all([...listeners].map((stop) => stop()));
    },
  };
}

/**
 * Raw SQL over an embedded PGlite database (one connection, shared with Prisma).
 * `stopListening` ends every LISTEN: PGlite does not close while one is active.
 */
export function pgliteRunner(db: PGlite): SqlRunner & { stopListening(): Promise<void> } {
  const listeners = new Set<() => Promise<void>>();
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
    async listen(channel, onMessage) {
      const unlisten = await db.listen(channel, onMessage);
      const stop = async (): Promise<void> => {
        if (listeners.delete(stop)) await unlisten();
      };
      listeners.add(stop);
      return stop;
    },
    async stopListening() {
      await Promise.all([...listeners].map((stop) => stop()));
    },
  };
}
