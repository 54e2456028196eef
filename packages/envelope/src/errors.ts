import { ErrorCode } from "./codes";

/** Extra top-level fields an error adds to its envelope (`var_name`, `queue_id`...). */
export type ErrorFields = Record<string, unknown>;

/**
 * An error a handler throws to answer the client: the one error middleware
 * renders it as `{"result":"error","msg":...,"code":...,...fields}`.
 * The defaults (HTTP 400, `BAD_REQUEST`) are Zulip's.
 */
export class JsonableError extends Error {
  override readonly name: string = "JsonableError";

  constructor(
    message: string,
    /** Machine-readable code; `null` for the few envelopes that carry none (405). */
    readonly code: ErrorCode | null = ErrorCode.BAD_REQUEST,
    /** HTTP status of the response. */
    readonly httpStatus = 400,
    /** Extra top-level fields of the envelope. */
    readonly fields: ErrorFields = {},
    /** Extra HTTP response headers. */
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

/** `Missing 'NAME' argument`, with `var_name`. */
export class RequestVariableMissingError extends JsonableError {
  constructor(readonly varName: string) {
    super(`Missing '${varName}' argument`, ErrorCode.REQUEST_VARIABLE_MISSING, 400, {
      var_name: varName,
    });
  }
}

/** Two aliases of one parameter were both given. */
export class RequestConfusingVarError extends JsonableError {
  constructor(first: string, second: string) {
    super(
      `Can't decide between '${first}' and '${second}' arguments`,
      ErrorCode.REQUEST_CONFUSING_VAR,
    );
  }
}

/**
 * A caller-owned object (draft, saved snippet, reminder) that does not exist or
 * belongs to someone else: HTTP 404 with code `BAD_REQUEST`, as Zulip answers.
 */
export class ResourceNotFoundError extends JsonableError {
  constructor(message: string) {
    super(message, ErrorCode.BAD_REQUEST, 404);
  }
}

/** Every 401 carries this challenge (Zulip's realm name, kept for client compatibility). */
export const WWW_AUTHENTICATE = 'Basic realm="zulip"';

/** An authentication failure: HTTP 401 with `WWW-Authenticate`. */
export class UnauthorizedError extends JsonableError {
  constructor(message: string, code: ErrorCode = ErrorCode.UNAUTHORIZED) {
    super(message, code, 401, {}, { "WWW-Authenticate": WWW_AUTHENTICATE });
  }
}

/** An admin-only operation called by a non-admin. */
export class OrganizationAdministratorRequiredError extends JsonableError {
  constructor() {
    super("Must be an organization administrator", ErrorCode.UNAUTHORIZED_PRINCIPAL);
  }
}

/** An owner-only operation called by a non-owner. */
export class OrganizationOwnerRequiredError extends JsonableError {
  constructor() {
    super("Must be an organization owner", ErrorCode.UNAUTHORIZED_PRINCIPAL);
  }
}

/** The generic permission error (HTTP 400, not 403, as in Zulip). */
export class InsufficientPermissionError extends JsonableError {
  constructor() {
    super("Insufficient permission");
  }
}

/** Over the rate limit: HTTP 429 with `retry-after` in the body and `Retry-After` header. */
export class RateLimitedError extends JsonableError {
  constructor(retryAfterSeconds: number, headers: Record<string, string> = {}) {
    super(
      "API usage exceeded rate limit",
      ErrorCode.RATE_LIMIT_HIT,
      429,
      { "retry-after": retryAfterSeconds },
      { ...headers, "Retry-After": String(Math.ceil(retryAfterSeconds)) },
    );
  }
}

/** An unknown, foreign or deleted event queue. */
export class BadEventQueueIdError extends JsonableError {
  constructor(queueId: string) {
    super(`Bad event queue ID: ${queueId}`, ErrorCode.BAD_EVENT_QUEUE_ID, 400, {
      queue_id: queueId,
    });
  }
}

/** A known path called with a method it does not serve; checked before authentication. */
export class MethodNotAllowedError extends JsonableError {
  constructor(readonly allowedMethods: readonly string[]) {
    super(
      "Method Not Allowed",
      null,
      405,
      { allowed_methods: [...allowedMethods] },
      { Allow: allowedMethods.join(", ") },
    );
  }
}

/** An unknown path under `/api/v1` (ours: Zulip renders an HTML page). */
export class PathNotFoundError extends JsonableError {
  constructor() {
    super("Not found", ErrorCode.NOT_FOUND, 404);
  }
}
