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

/** Prisma's client or one of its transactions: what a typed statement runs on. */
export type PrismaRunner = Prisma.TransactionClient;

/**
 * Prisma's raw queries give PostgreSQL's bigint as a JS bigint; the generated
 * table types (like `pg`) say string. Rows are handed over as the types say.
 */
function asTableTypes<R>(rows: Record<string, unknown>[]): R[] {
  for (const row of rows) {
    for (const key in row) {
      const value = row[key];
      if (typeof value === "bigint") row[key] = value.toString();
    }
  }
  return rows as R[];
}

/** Whether a compiled statement answers rows (a SELECT, or a write with RETURNING). */
function answersRows(query: CompiledQuery): boolean {
  const node = query.query;
  if (node.kind === "SelectQueryNode" || node.kind === "RawNode") return true;
  return "returning" in node && node.returning !== undefined;
}

/**
 * One Kysely connection over a Prisma client or transaction: the statement is
 * compiled by Kysely and sent through Prisma's raw query (the same pool, or
 * PGlite's one connection, and the same transaction as the Prisma calls beside it).
 */
class PrismaConnection implements DatabaseConnection {
  constructor(private readonly runner: PrismaRunner) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    if (answersRows(query)) {
      const rows = await this.runner.$queryRawUnsafe<Record<string, unknown>[]>(
        query.sql,
        ...query.parameters,
      );
      return { rows: asTableTypes<R>(rows) };
    }
    const affected = await this.runner.$executeRawUnsafe(query.sql, ...query.parameters);
    return { rows: [], numAffectedRows: BigInt(affected) };
  }

  streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error("streaming is not supported: read in pages");
  }
}

/** Transactions are Prisma's (`Database.transaction`), never Kysely's. */
function refuse(): Promise<never> {
  return Promise.reject(new Error("open transactions with Database.transaction, not Kysely"));
}

function prismaDriver(runner: PrismaRunner): Driver {
  const connection = new PrismaConnection(runner);
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

/** A typed query builder whose statements run on `runner` (Prisma's client or a transaction). */
export function kyselyOver(runner: PrismaRunner): Kysely<DB> {
  const dialect: Dialect = {
    createAdapter: () => new PostgresAdapter(),
    createDriver: () => prismaDriver(runner),
    createIntrospector: (db) => new PostgresIntrospector(db),
    createQueryCompiler: () => new PostgresQueryCompiler(),
  };
  return new Kysely<DB>({ dialect });
}

/**
 * What every statement runs on: the database outside a transaction, or one
 * transaction. `prisma` for the data model's operations, `q` for the typed
 * statements of `src/db/queries` (Kysely, made on first use), both on the same
 * connection: what one writes, the other reads.
 */
export interface Tx {
  readonly prisma: PrismaRunner;
  readonly q: Kysely<DB>;
}

/** The `Tx` of Prisma's client or of one of its transactions. */
export function txOf(prisma: PrismaRunner): Tx {
  let q: Kysely<DB> | undefined;
  return {
    prisma,
    get q() {
      q ??= kyselyOver(prisma);
      return q;
    },
  };
}
