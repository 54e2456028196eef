import type { PGlite, Transaction } from "@electric-sql/pglite";
import type { Pool, PoolClient } from "pg";

/** A row of a raw query. */
export type Row = Record<string, unknown>;

/** What one statement gave: its rows, and how many rows it wrote. */
export interface Outcome {
  rows: Row[];
  affected: number;
}

/** One connection, held for a sequence of statements (a transaction, an advisory lock). */
export interface SqlSession {
  query<T extends Row = Row>(text: string, params?: readonly unknown[]): Promise<T[]>;
  /** One statement, with the count of rows it wrote (what Kysely's driver needs). */
  run(text: string, params: readonly unknown[]): Promise<Outcome>;
  /** Runs a script of several statements (a migration file). */
  exec(script: string): Promise<void>;
}

/**
 * The drivers beside Prisma's adapters, over the same pool or PGlite: Kysely's
 * statements run on their sessions (src/db/kysely.ts); raw SQL text only for
 * migrations, LISTEN and readiness checks. Both drivers speak PostgreSQL.
 */
export interface SqlRunner extends SqlSession {
  /** Runs `work` on one connection of its own. */
  withSession<T>(work: (session: SqlSession) => Promise<T>): Promise<T>;
  /**
   * Runs `work` in one transaction on one connection: committed when it
   * resolves, rolled back when it throws (the error goes on).
   */
  transaction<T>(work: (session: SqlSession) => Promise<T>): Promise<T>;
  /**
   * Calls `onMessage` for every NOTIFY on `channel`; resolves to the unsubscribe
   * function. A lost connection is reopened (with backoff) and LISTENs again;
   * `onRestored` is called then, since NOTIFYs sent meanwhile were missed.
   */
  listen(
    channel: string,
    onMessage: (payload: string) => void,
    onRestored?: () => void,
  ): Promise<() => Promise<void>>;
}

/** First and longest wait before reopening a lost LISTEN connection. */
const LISTEN_RETRY_MS = 100;
const LISTEN_RETRY_MAX_MS = 5000;

function quoteIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/** The session of a node-postgres pool (a connection per statement) or of one of its connections. */
export function pgSession(client: Pool | PoolClient): SqlSession {
  return {
    async query<T extends Row>(text: string, params: readonly unknown[] = []) {
      return (await client.query<T>(text, [...params])).rows;
    },
    async run(text, params) {
      const result = await client.query<Row>(text, [...params]);
      return { rows: result.rows, affected: result.rowCount ?? 0 };
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
export function pgRunner(
  pool: Pool,
  onError?: (error: Error) => void,
): SqlRunner & { stopListening(): Promise<void> } {
  const listeners = new Set<() => Promise<void>>();
  return {
    ...pgSession(pool),
    async withSession(work) {
      const client = await pool.connect();
      try {
        return await work(pgSession(client));
      } finally {
        client.release();
      }
    },
    async transaction(work) {
      const client = await pool.connect();
      let broken: Error | undefined;
      try {
        await client.query("BEGIN");
        const result = await work(pgSession(client));
        await client.query("COMMIT");
        return result;
      } catch (error) {
        try {
          await client.query("ROLLBACK");
        } catch (rollback) {
          // A connection that cannot roll back is not given back to the pool.
          broken = rollback instanceof Error ? rollback : new Error(String(rollback));
        }
        throw error;
      } finally {
        client.release(broken);
      }
    },
    async listen(channel, onMessage, onRestored) {
      let client: PoolClient | undefined;
      let stopped = false;
      let retry: NodeJS.Timeout | undefined;
      const open = async (): Promise<void> => {
        const opened = await pool.connect();
        opened.on("notification", (message) => {
          if (message.channel === channel) onMessage(message.payload ?? "");
        });
        // A checked-out client that errors (the server went away) must have a listener.
        opened.on("error", (error) => lost(opened, error));
        try {
          await opened.query(`LISTEN ${quoteIdentifier(channel)}`);
        } catch (error) {
          opened.release(true);
          throw error;
        }
        client = opened;
      };
      const lost = (which: PoolClient, error: Error): void => {
        if (client !== which) return;
        client = undefined;
        which.release(error);
        if (stopped) return;
        onError?.(error);
        reopen(LISTEN_RETRY_MS);
      };
      const reopen = (delay: number): void => {
        retry = setTimeout(() => {
          open().then(
            () => onRestored?.(),
            () => reopen(Math.min(delay * 2, LISTEN_RETRY_MAX_MS)),
          );
        }, delay);
        retry.unref();
      };
      await open();
      const stop = async (): Promise<void> => {
        if (!listeners.delete(stop)) return;
        stopped = true;
        clearTimeout(retry);
        const current = client;
        client = undefined;
        if (current === undefined) return;
        try {
          await current.query(`UNLISTEN ${quoteIdentifier(channel)}`);
          current.release();
        } catch (error) {
          current.release(error instanceof Error ? error : true);
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

/** The session of an embedded PGlite database or of one of its transactions. */
export function pgliteSession(db: PGlite | Transaction): SqlSession {
  return {
    async query<T extends Row>(text: string, params: readonly unknown[] = []) {
      return (await db.query<T>(text, [...params])).rows;
    },
    async run(text, params) {
      const result = await db.query<Row>(text, [...params]);
      return { rows: result.rows, affected: result.affectedRows ?? 0 };
    },
    async exec(script) {
      await db.exec(script);
    },
  };
}

/**
 * Raw SQL over an embedded PGlite database (one connection, shared with Prisma).
 * `stopListening` ends every LISTEN: PGlite does not close while one is active.
 */
export function pgliteRunner(db: PGlite): SqlRunner & { stopListening(): Promise<void> } {
  const listeners = new Set<() => Promise<void>>();
  const session = pgliteSession(db);
  return {
    ...session,
    withSession: (work) => work(session),
    // PGlite runs nothing else (Prisma included) while a transaction holds its one connection.
    transaction: (work) => db.transaction((tx) => work(pgliteSession(tx))),
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
