import type { IncomingMessage, ServerResponse } from "node:http";
import { JsonableError, renderError } from "@repo/envelope";
import type { Logger } from "pino";
import { databaseUnavailableError, isDatabaseUnavailable } from "../db/unavailable";
import type { Client } from "../realtime/polls";
import { stringify } from "../lib/json-text";
import { randomUuid } from "../lib/random-key";
import type { AppMetrics } from "../lib/metrics";

const REQUEST_ID = /^[\w.-]{1,64}$/;

/**
 * One request as the dispatcher and the access log see it, on either path to
 * an operation (Express's router, or the poll lane of `src/poll-lane.ts`).
 */
export interface Exchange extends Client {
  /** Its `X-Request-Id`. */
  id: string;
  /** The route template it matched (metrics label), `unmatched` before. */
  route: string;
  /** Set when its connection closes before the answer ({@link observe}), then `onGone` runs. */
  gone: boolean;
  /**
   * The answer's headers so far, as name, value, name, value...: written with
   * the status line in one `writeHead` ({@link sendJson}). Node's `setHeader`
   * keeps a lowercased copy of each in an object first, and every answer has
   * 18 of them; a request on Express's path has its first ones set on the
   * response at once ({@link applyHeaders}), since Express may answer it itself.
   */
  headers: string[];
}

/** Adds `headers` to the answer's, in their order. */
export function addHeaders(exchange: Exchange, headers: Iterable<[string, string]>): void {
  for (const [name, value] of headers) exchange.headers.push(name, value);
}

/** Sets the headers noted so far on the response (for an answer Express writes) and forgets them. */
export function applyHeaders(res: ServerResponse, exchange: Exchange): void {
  const { headers } = exchange;
  for (let i = 0; i < headers.length; i += 2) res.setHeader(headers[i] ?? "", headers[i + 1] ?? "");
  exchange.headers = [];
}

/**
 * Gives the request its id and, when it closes, counts it and writes its
 * access-log line (only what is safe: never headers, which carry
 * Authorization, query strings or bodies, which carry keys and passwords).
 * `path` is read now: routers mounted under a prefix change `req.url`.
 */
export function observe(
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
  { metrics, logger }: { metrics: AppMetrics; logger: Logger },
): Exchange {
  const given = req.headers["x-request-id"];
  const id = typeof given === "string" && REQUEST_ID.test(given) ? given : randomUuid();
  const exchange: Exchange = {
    id,
    route: "unmatched",
    gone: false,
    onGone: undefined,
    headers: ["X-Request-Id", id],
  };
  const method = req.method ?? "";
  // Timed here and observed directly: prom-client's startTimer makes two arrays and merges
  // two label objects per request for the same observation.
  const start = performance.now();
  // `on`, not `once`: a response closes once, and `once` adds a wrapper and a bound function.
  res.on("close", () => {
    const entry = {
      req: { id, method, path, remoteAddress: req.socket.remoteAddress },
      res: { statusCode: res.statusCode },
    };
    if (!res.writableFinished) {
      exchange.gone = true;
      exchange.onGone?.clientGone();
      exchange.onGone = undefined;
      logger.warn(entry, "request aborted");
      return;
    }
    const { route } = exchange;
    const seconds = (performance.now() - start) / 1000;
    metrics.latency.observe({ method, route }, seconds);
    metrics.requests.inc({ method, route, status: String(res.statusCode) });
    // The line's object made in one literal and each level's method called by
    // name: a spread into it and a computed method cost 12 µs more per request
    // (about a seventh of a poll's CPU), for the same bytes.
    const line = { req: entry.req, res: entry.res, responseTime: Math.round(seconds * 1000) };
    if (res.statusCode >= 500) logger.error(line, "request completed");
    else logger.info(line, "request completed");
  });
  return exchange;
}

/** Where Express's path keeps a request's {@link Exchange}: `res.locals`, under this name. */
export const EXCHANGE = "exchange";

/** The {@link Exchange} of a request on Express's path (noted by its first middleware). */
export function exchangeOf(res: { locals: Record<string, unknown> }): Exchange {
  return res.locals[EXCHANGE] as Exchange;
}

/**
 * A JSON answer, written at once with the exchange's headers (what Express's
 * `res.json` does for this API, without its checks). Headers already set on
 * the response come first: Node's `writeHead` appends these after them.
 */
export function sendJson(
  res: ServerResponse,
  exchange: Exchange,
  status: number,
  body: unknown,
): void {
  const text = stringify(body);
  res.writeHead(status, [
    ...exchange.headers,
    "Content-Type",
    "application/json; charset=utf-8",
    "Content-Length",
    String(Buffer.byteLength(text)),
  ]);
  res.end(res.req.method === "HEAD" ? undefined : text);
}

/** Body-parser failures are the client's: a 4xx in the envelope, never a 500. */
function clientError(error: unknown): JsonableError | undefined {
  const { status, type } = (error ?? {}) as { status?: unknown; type?: unknown };
  if (typeof status !== "number" || status < 400 || status >= 500) return undefined;
  if (type === "entity.too.large")
    return new JsonableError("Request body too large", "BAD_REQUEST", 413);
  return new JsonableError("Malformed request body", "BAD_REQUEST", status === 415 ? 415 : 400);
}

/**
 * Answers a thrown value in the error envelope: the envelope's classes as
 * themselves, an unreachable database as 503, anything else as the plain 500
 * (logged, never shown).
 */
export function sendError(
  res: ServerResponse,
  error: unknown,
  exchange: Exchange,
  logger: Logger,
): void {
  const reqId = exchange.id;
  if (res.headersSent) {
    // Too late for an envelope: the client sees the connection cut, not half an answer.
    logger.error({ err: error, reqId }, "failed after the answer began");
    res.destroy();
    return;
  }
  if (isDatabaseUnavailable(error)) {
    // Not a defect: the request may succeed once the database is back.
    logger.warn({ err: error, reqId }, "database unavailable");
    error = databaseUnavailableError();
  }
  const { status, headers, body } = renderError(clientError(error) ?? error);
  if (status >= 500 && status !== 503) logger.error({ err: error, reqId }, "unhandled error");
  addHeaders(exchange, Object.entries(headers));
  sendJson(res, exchange, status, body);
}
