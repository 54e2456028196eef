import { Prisma } from "../gen/prisma/client";
import { ErrorCode, JsonableError } from "@repo/envelope";

/** Socket errors of a database that cannot be reached. */
const SOCKET_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EPIPE",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
]);

/**
 * SQLSTATEs of a server going away or not taking connections: class 08
 * (connection exception), 57P01-57P03 (shutting down, crashed, starting up),
 * 53300 (too many connections).
 */
const SERVER_GONE = /^(08...|57P0[123]|53300)$/;

/** Prisma's codes for an unreachable database, a closed connection, a pool timeout (and see P2028 below). */
const PRISMA_CODES = new Set(["P1001", "P1002", "P1008", "P1017", "P2024"]);

/** Prisma driver adapters' error kinds for the same. */
const ADAPTER_KINDS = new Set([
  "DatabaseNotReachable",
  "ConnectionClosed",
  "SocketTimeout",
  "TooManyConnections",
]);

/** node-postgres's own messages for a connection lost or never made. */
const PG_MESSAGES =
  /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Connection closed/i;

/** Prisma's P2028 when a transaction waited its `maxWait` for a connection: the pool is exhausted. */
const NO_CONNECTION_IN_TIME = /Unable to start a transaction in the given time/;

/**
 * Whether `error` (or one of its causes) says the database cannot be reached
 * now, as opposed to a statement it refused: the request may succeed later,
 * so it is answered 503, not 500.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  return someCause(
    error,
    ({ codes, kind, message }) =>
      codes.some((c) => SOCKET_CODES.has(c) || PRISMA_CODES.has(c) || SERVER_GONE.test(c)) ||
      (kind !== undefined && ADAPTER_KINDS.has(kind)) ||
      (message !== undefined && PG_MESSAGES.test(message)) ||
      (codes.includes("P2028") && message !== undefined && NO_CONNECTION_IN_TIME.test(message)),
  );
}

/** What an error in a cause chain says of itself. */
interface ErrorFacts {
  /** Its `code` and `originalCode` (SQLSTATEs, socket codes, Prisma codes). */
  codes: string[];
  /** A Prisma driver adapter's error kind. */
  kind: string | undefined;
  message: string | undefined;
}

/**
 * Whether `test` holds for `error` or one of its causes (Prisma puts the
 * driver's error under meta.driverAdapterError.cause; others chain `cause`),
 * looking at most 16 deep.
 */
function someCause(error: unknown, test: (facts: ErrorFacts) => boolean): boolean {
  const text = (value: unknown) => (typeof value === "string" ? value : undefined);
  const pending: unknown[] = [error];
  for (let seen = 0; pending.length > 0 && seen < 16; seen++) {
    const current = pending.shift();
    if (current === null || typeof current !== "object") continue;
    const { code, kind, message, originalCode, cause, meta, driverAdapterError } =
      current as Record<string, unknown>;
    const codes = [text(code), text(originalCode)].filter((c) => c !== undefined);
    if (test({ codes, kind: text(kind), message: text(message) })) return true;
    pending.push(cause, meta, driverAdapterError);
  }
  return false;
}

/** SQLSTATEs of a transaction PostgreSQL aborted to let others through: deadlock, serialization. */
const CONFLICT_CODES = new Set(["40P01", "40001", "P2034"]);

/**
 * Whether `error` is a transaction conflict: PostgreSQL chose this
 * transaction as a deadlock's victim, or could not serialize it. Nothing it
 * wrote was kept, so running it again is safe.
 */
export function isTransactionConflict(error: unknown): boolean {
  return someCause(
    error,
    ({ codes, kind, message }) =>
      codes.some((c) => CONFLICT_CODES.has(c)) ||
      kind === "TransactionWriteConflict" ||
      (message !== undefined && /deadlock detected|could not serialize access/.test(message)),
  );
}

/** Seconds a client is told to wait before trying again. */
export const RETRY_AFTER_SECONDS = 5;

/** The answer while the database cannot be reached. */
export function databaseUnavailableError(): JsonableError {
  return new JsonableError(
    "Service unavailable: the database cannot be reached; try again shortly",
    ErrorCode.SERVICE_UNAVAILABLE,
    503,
    {},
    { "Retry-After": String(RETRY_AFTER_SECONDS) },
  );
}

/** Whether `error` is PostgreSQL's unique violation, as Prisma reports it. */
export function isUniqueViolation(error: unknown): boolean {
  return error instanceof Prisma.PrismaClientKnownRequestError && error.code === "P2002";
}
