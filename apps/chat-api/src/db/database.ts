import { mkdir } from "node:fs/promises";
import { PGlite } from "@electric-sql/pglite";
import { PrismaPg } from "@prisma/adapter-pg";
import { Pool } from "pg";
import { PrismaPGlite } from "pglite-prisma-adapter";
import { PrismaClient } from "../gen/prisma/client";
import { type SqlRunner, pgRunner, pgliteRunner } from "./sql";

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

/** An open database: Prisma for the application, raw SQL for the rest. */
export interface Database {
  readonly kind: DatabaseConfig["kind"];
  readonly prisma: PrismaClient;
  readonly sql: SqlRunner;
  /** Whether the database answers (for `/readyz`). */
  ping(): Promise<boolean>;
  /** Connection pool figures for metrics (PGlite: one connection). */
  poolStats(): { total: number; idle: number; waiting: number };
  /** Closes the connections; later calls wait for the first. */
  close(): Promise<void>;
}

/** Opens the database that `config` names; every entry point and test goes through here. */
export async function createDatabase(
  config: DatabaseConfig,
  onError?: (error: Error) => void,
): Promise<Database> {
  if (config.kind === "postgres") {
    const { schema } = config;
    const pool = new Pool({
      connectionString: config.url,
      max: config.poolSize ?? 10,
      // A database that does not answer fails requests (503) instead of holding them.
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      ...(schema === undefined ? {} : { options: `-c search_path="${schema}"` }),
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
  if (config.dataDir !== undefined) await mkdir(config.dataDir, { recursive: true });
  const db = new PGlite(config.dataDir, {
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

function wrap(
  kind: Database["kind"],
  prisma: PrismaClient,
  sql: SqlRunner,
  end: () => Promise<void>,
  poolStats: Database["poolStats"],
): Database {
  let closing: Promise<void> | undefined;
  return {
    kind,
    prisma,
    sql,
    poolStats,
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
