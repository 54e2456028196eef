import type { ErrorCode } from "./codes";
import { JsonableError } from "./errors";

/** A success body: `result` and `msg` first, then the operation's data. */
export type SuccessBody<T extends object = Record<string, unknown>> = {
  result: "success";
  msg: "";
  ignored_parameters_unsupported?: string[];
} & T;

/** An error body: `result`, `msg`, `code` (absent on 405 and 500), then extra fields. */
export interface ErrorBody {
  result: "error";
  msg: string;
  code?: ErrorCode;
  [field: string]: unknown;
}

/** Envelope fields that data or extra fields never overwrite. */
const RESERVED_FIELDS: ReadonlySet<string> = new Set([
  "result",
  "msg",
  "code",
  "ignored_parameters_unsupported",
]);

/**
 * Renders a success body. `ignoredParameters` is sorted and sent only when it
 * is non-empty (feature level 167).
 */
export function renderSuccess<T extends object>(
  data: T,
  ignoredParameters: readonly string[] = [],
): SuccessBody<T> {
  const body: Record<string, unknown> = { result: "success", msg: "" };
  for (const [field, value] of Object.entries(data)) {
    if (!RESERVED_FIELDS.has(field)) body[field] = value;
  }
  if (ignoredParameters.length > 0) {
    body.ignored_parameters_unsupported = [...ignoredParameters].sort();
  }
  return body as SuccessBody<T>;
}

/** The body of any failure that is not a {@link JsonableError}: no detail leaks out. */
export const INTERNAL_ERROR_BODY: ErrorBody = Object.freeze({
  result: "error",
  msg: "Internal server error",
});

/** What to send for a thrown value: HTTP status, headers and body. */
export interface RenderedError {
  status: number;
  headers: Record<string, string>;
  body: ErrorBody;
}

/**
 * Renders any thrown value. A {@link JsonableError} becomes its envelope;
 * anything else becomes the plain 500, so no stack, SQL or library text reaches
 * a client.
 */
export function renderError(error: unknown): RenderedError {
  if (!(error instanceof JsonableError)) {
    return { status: 500, headers: {}, body: { ...INTERNAL_ERROR_BODY } };
  }
  const body: ErrorBody = { result: "error", msg: error.message };
  if (error.code !== null) body.code = error.code;
  for (const [field, value] of Object.entries(error.fields)) {
    if (!RESERVED_FIELDS.has(field)) body[field] = value;
  }
  return { status: error.httpStatus, headers: { ...error.headers }, body };
}
