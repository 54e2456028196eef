import { setTimeout as sleep } from "node:timers/promises";
import { AsyncLocalStorage } from "node:async_hooks";
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { PGlite, type Transaction } from "@electric-sql/pglite";
import { PrismaPg } from "@prisma/adapter-pg";
import type { Kysely } from "kysely";
import { Pool, type PoolClient } from "pg";
import { PrismaPGlite } from "pglite-prisma-adapter";
import type { DB } from "../gen/kysely/tables";
import { PrismaClient } from "../gen/prisma/client";
import { type Tx, kyselyOver, txOn } from "./kysely";
import { OneStatementAtATime } from "./pg-client";
import {
  type SqlRunner,
  type SqlSession,
  pgRunner,
  pgSession,
  pgliteRunner,
  pgliteSession,
} from "./sql";
import { isTransactionConflict } from "./unavailable";

const run = promisify(execFile);

/** How long to wait for a new PostgreSQL connection before failing the query. */
const CONNECT_TIMEOUT_MS = 5000;

/** Where the data lives. */
export type DatabaseConfig =
  | {
      kind: "postgres";
      /** A PostgreSQL connection string. */
      url: string;
      /** Connections in the pool shared by Prisma and raw SQL. */
      poolSize?: number;
      /** A schema other than `public` (tests use one each). */
      schema?: string;
    }
  | {
      kind: "pglite";
      /** A directory for the files; `undefined` keeps the database in memory. */
      dataDir?: string;
      /**
       * PostgreSQL's `shared_buffers` (default 128MB). PGlite clears them at each
       * start, which takes most of its start-up time at the default.
       */
      sharedBuffers?: string;
    };

/** How many times a transaction runs when it keeps losing conflicts (deadlocks, serialization). */
export const TRANSACTION_ATTEMPTS = 4;

/**
 * Prisma's limits on a transaction, by database: on PostgreSQL, 2 s to get
 * one of the pool's connections and 5 s to run (Prisma's defaults: a
 * transaction holds a connection; past the wait, the pool is exhausted and
 * the request is answered 503). The embedded database has one connection,
 * which every request waits for while a transaction runs whatever its limit,
 * and it shares the process's CPU with them: there a limit only turned a slow
 * write into a 500 (65 subscriptions to channels of 3,000 people took 1.5 s
 * on an idle machine, past 5 s on a busy one; two people accepting one
 * invitation at once on a loaded machine, the second waiting past 2 s for the
 * connection), so both are 60 s.
 */
const DEFAULT_TRANSACTION_OPTIONS: Record<Database["kind"], TransactionOptions> = {
  postgres: { maxWait: 2000, timeout: 5000 },
  pglite: { maxWait: 60_000, timeout: 60_000 },
};

/** Options of one transaction; each one not given is the database's (above). */
export interface TransactionOptions {
  /** Longest wait for a connection before the transaction starts. */
  maxWait?: number;
  /** Longest run before it is rolled back (the demo seed needs more than PostgreSQL's 5 s). */
  timeout?: number;
}

/**
 * An open database. As a `Tx` it runs statements outside any transaction
 * (`prisma`, `q`); `transaction` runs work in one. Actions take a `Database`
 * when they open a transaction, a `Tx` when they run inside one (or need none).
 */
export interface Database extends Tx {
  readonly kind: DatabaseConfig["kind"];
  readonly prisma: PrismaClient;
  readonly q: Kysely<DB>;
  /** Raw SQL for what is not data: migrations, advisory locks, LISTEN/NOTIFY, readiness. */
  readonly sql: SqlRunner;
  /**
   * Runs `work` in one transaction (Prisma's and Kysely's statements on the
   * same connection): committed when it resolves, rolled back when it throws.
   */
  transaction<T>(work: (tx: Tx) => Promise<T>, options?: TransactionOptions): Promise<T>;
  /**
   * Registers `read`, which resolves once events committed before its call
   * are read (an EventHub's `settle`), for {@link Tx.wroteEvents}; returns
   * its removal.
   */
  onEvents(read: () => Promise<void>): () => void;
  /** Whether the database answers (for `/readyz`). */
  ping(): Promise<boolean>;
  /** Connection pool figures for metrics (PGlite: one connection). */
  poolStats(): { total: number; idle: number; waiting: number };
  /** Closes the connections; later calls wait for the first. */
  close(): Promise<void>;
}

/**
 * How `transaction` learns the connection Prisma's transaction holds: the
 * drivers below note it, in the async context of the `$transaction` call, on
 * the first connection taken there (Prisma's adapters take it before BEGIN).
 */
interface Opening {
  session?: SqlSession;
  taken?: true;
}
const opening = new AsyncLocalStorage<Opening>();
/**
 * Transactions under way. With none, `opening` is disabled: on Node 20 an
 * enabled AsyncLocalStorage runs a hook at every promise of the process
 * (8 µs of a 130 µs poll, `bench:poll-pair`); `run` enables it again.
 */
let underWay = 0;

/** The opening transaction in this async context that has not taken its connection yet. */
function untakenOpening(): Opening | undefined {
  const current = opening.getStore();
  if (current === undefined || current.taken) return undefined;
  current.taken = true;
  return current;
}

/** node-postgres's pool, noting the connection a transaction of `Database.transaction` takes. */
class TransactionPool extends Pool {
  override connect(): Promise<PoolClient>;
  override connect(
    callback: (err: Error | undefined, client: PoolClient | undefined, done: () => void) => void,
  ): void;
  override connect(
    callback?: (err: Error | undefined, client: PoolClient | undefined, done: () => void) => void,
  ): Promise<PoolClient> | void {
    // The pool's own queries connect with a callback.
    if (callback !== undefined) {
      super.connect(callback);
      return;
    }
    const current = untakenOpening();
    const connected = super.connect();
    if (current === undefined) return connected;
    return connected.then((client) => {
      current.session = pgSession(client);
      return client;
    });
  }
}

/** PGlite, noting the transaction `Database.transaction` opens (its one connection, held). */
class TransactionPGlite extends PGlite {
  /**
   * Each protocol exchange runs on this thread and resolves as a microtask, so
   * a request's statements would follow one another without letting the
   * event loop in: a 5,000-message move held every other request ~0.8 s.
   * After each exchange the loop runs what waits (other requests' I/O,
   * timers) before the next statement.
   */
  override async execProtocolRaw(
    message: Uint8Array,
    options?: Parameters<PGlite["execProtocolRaw"]>[1],
  ): Promise<Uint8Array> {
    const answer = await super.execProtocolRaw(message, options);
    await new Promise<void>((resolve) => setImmediate(resolve));
    return answer;
  }

  override transaction<T>(callback: (tx: Transaction) => Promise<T>): Promise<T> {
    const current = untakenOpening();
    if (current === undefined) return super.transaction(callback);
    return super.transaction((tx) => {
      current.session = pgliteSession(tx);
      return callback(tx);
    });
  }
}

/** Opens the database that `config` names; every entry point and test goes through here. */
export async function createDatabase(
  config: DatabaseConfig,
  onError?: (error: Error) => void,
): Promise<Database> {
  if (config.kind === "postgres") {
    const { schema } = config;
    const pool = new TransactionPool({
      connectionString: config.url,
      max: config.poolSize ?? 10,
      // A database that does not answer fails requests (503) instead of holding them.
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      ...(schema === undefined ? {} : { options: `-c search_path="${schema}"` }),
      Client: OneStatementAtATime,
    });
    // An idle connection the server closed (a restart, an outage): the pool drops it and
    // opens a new one on the next query; without a listener the process would crash.
    pool.on("error", (error) => onError?.(error));
    const prisma = new PrismaClient({
      adapter: new PrismaPg(pool, schema === undefined ? undefined : { schema }),
    });
    const stats = () => ({
      total: pool.totalCount,
      idle: pool.idleCount,
      waiting: pool.waitingCount,
    });
    const sql = pgRunner(pool, onError);
    // LISTEN holds a pooled connection, and the pool does not end while one is out.
    const end = async (): Promise<void> => {
      await sql.stopListening();
      await pool.end();
    };
    return wrap("postgres", prisma, sql, end, stats);
  }
  if (config.dataDir !== undefined) await createDataDir(config.dataDir);
  const db = new TransactionPGlite(config.dataDir, {
    startParams: [
      ...PGlite.defaultStartParams,
      ...(config.sharedBuffers === undefined
        ? []
        : ["-c", `shared_buffers=${config.sharedBuffers}`]),
    ],
  });
  await db.waitReady;
  const prisma = new PrismaClient({ adapter: new PrismaPGlite(db) });
  const sql = pgliteRunner(db);
  // PGlite does not close while a LISTEN is active.
  const end = async (): Promise<void> => {
    await sql.stopListening();
    await db.close();
  };
  return wrap("pglite", prisma, sql, end, () => ({ total: 1, idle: 1, waiting: 0 }));
}

/**
 * Makes PGlite's data directory when it has none, in a child process: PGlite's
 * initdb takes 500-650 MB at its peak, and a process that ran it keeps about
 * 110 MB more resident for good (malloc's heap and WebAssembly pages it does
 * not give back) than one that opens an existing directory.
 */
async function createDataDir(dataDir: string): Promise<void> {
  await mkdir(dataDir, { recursive: true });
  if (existsSync(join(dataDir, "PG_VERSION"))) return;
  const initialise = [
    "const { PGlite } = require(process.argv[1]);",
    "const db = new PGlite(process.argv[2]);",
    "db.waitReady.then(() => db.close()).catch((error) => { process.stderr.write(String(error)); process.exit(1); });",
  ].join("\n");
  await run(process.execPath, [
    "-e",
    initialise,
    require.resolve("@electric-sql/pglite"),
    resolve(dataDir),
  ]);
}

function wrap(
  kind: Database["kind"],
  prisma: PrismaClient,
  sql: SqlRunner,
  end: () => Promise<void>,
  poolStats: Database["poolStats"],
): Database {
  let closing: Promise<void> | undefined;
  const q = kyselyOver(sql);
  const readers = new Set<() => Promise<void>>();
  // The events are committed: a reader that fails (it logs why) must not make
  // the writer report a failure, and its client write it again.
  const readEvents = async (): Promise<void> => {
    await Promise.all([...readers].map((read) => read().catch(() => undefined)));
  };
  return {
    kind,
    prisma,
    q,
    sql,
    poolStats,
    wroteEvents: readEvents,
    onEvents(read) {
      readers.add(read);
      return () => readers.delete(read);
    },
    async transaction(work, options) {
      const once = async () => {
        const current: Opening = {};
        let events = false;
        underWay++;
        try {
          const value = await opening.run(current, () =>
            prisma.$transaction(
              (tx) => {
                if (current.session === undefined)
                  throw new Error("the transaction's connection was not noted");
                return work(
                  txOn(tx, current.session, () => {
                    events = true;
                  }),
                );
              },
              { ...DEFAULT_TRANSACTION_OPTIONS[kind], ...options },
            ),
          );
          return { value, events };
        } finally {
          if (--underWay === 0) opening.disable();
        }
      };
      // A deadlock's victim, or a transaction PostgreSQL could not serialize,
      // kept nothing: it runs again, after a short random pause, before its
      // caller ever hears of it.
      for (let attempt = 1; ; attempt++) {
        let done: { value: Awaited<ReturnType<typeof work>>; events: boolean };
        try {
          done = await once();
        } catch (error) {
          if (attempt >= TRANSACTION_ATTEMPTS || !isTransactionConflict(error)) throw error;
          await sleep(Math.random() * 20 * attempt);
          continue;
        }
        if (done.events) await readEvents();
        return done.value;
      }
    },
    async ping() {
      try {
        await sql.query("SELECT 1");
        return true;
      } catch {
        return false;
      }
    },
    close() {
      closing ??= prisma.$disconnect().then(end);
      return closing;
    },
  };
}
