import {
  type CompiledQuery,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type QueryResult,
} from "kysely";
import type { DB } from "../gen/kysely/tables";
import type { Prisma } from "../gen/prisma/client";
import type { Row, SqlSession } from "./sql";

/** Prisma's client or one of its transactions. */
export type PrismaRunner = Prisma.TransactionClient;

/**
 * What every statement runs on: the database outside a transaction, or one
 * transaction (`Database.transaction`). `prisma` for the data model's
 * operations, `q` for the typed statements of `src/db/queries` (Kysely), both
 * on the same connection and in the same transaction: what one writes, the
 * other reads.
 */
export interface Tx {
  readonly prisma: PrismaRunner;
  readonly q: Kysely<DB>;
  /**
   * Says that statements on it wrote events (`sendEvents`, a new message's
   * statement). Inside a transaction it is noted, and the transaction, once
   * committed, resolves after the event readers registered with the database
   * (`Database.onEvents`: the replica's EventHub) have read them; outside
   * one, the statement has committed and it waits for them now. So whoever
   * wrote events, a request or not, goes on once this replica holds them.
   */
  wroteEvents(): Promise<void>;
}

/**
 * PGlite gives PostgreSQL's bigint as a JS bigint; the generated table types
 * (like `pg`) say string. Rows are handed over as the types say.
 */
function asTableTypes<R>(rows: Row[]): R[] {
  for (const row of rows) {
    for (const key in row) {
      const value = row[key];
      if (typeof value === "bigint") row[key] = value.toString();
    }
  }
  return rows as R[];
}

/** One Kysely connection over a session: `pg`'s pool or one of its connections, or PGlite. */
class SessionConnection implements DatabaseConnection {
  constructor(private readonly session: SqlSession) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    const { rows, affected } = await this.session.run(query.sql, query.parameters);
    return { rows: asTableTypes<R>(rows), numAffectedRows: BigInt(affected) };
  }

  streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error("streaming is not supported: read in pages");
  }
}

/** Transactions are `Database.transaction`'s, never Kysely's. */
function refuse(): Promise<never> {
  return Promise.reject(new Error("open transactions with Database.transaction, not Kysely"));
}

function sessionDriver(session: SqlSession): Driver {
  const connection = new SessionConnection(session);
  return {
    init: () => Promise.resolve(),
    acquireConnection: () => Promise.resolve(connection),
    beginTransaction: refuse,
    commitTransaction: refuse,
    rollbackTransaction: refuse,
    releaseConnection: () => Promise.resolve(),
    destroy: () => Promise.resolve(),
  };
}

/** A typed query builder whose statements run on `session`. */
export function kyselyOver(session: SqlSession): Kysely<DB> {
  const dialect: Dialect = {
    createAdapter: () => new PostgresAdapter(),
    createDriver: () => sessionDriver(session),
    createIntrospector: (db) => new PostgresIntrospector(db),
    createQueryCompiler: () => new PostgresQueryCompiler(),
  };
  return new Kysely<DB>({ dialect });
}

/** The `Tx` of Prisma's client or transaction `prisma` and the session on its connection. */
export function txOn(prisma: PrismaRunner, session: SqlSession, noteEvents: () => void): Tx {
  let q: Kysely<DB> | undefined;
  return {
    prisma,
    get q() {
      q ??= kyselyOver(session);
      return q;
    },
    wroteEvents() {
      noteEvents();
      return Promise.resolve();
    },
  };
}
