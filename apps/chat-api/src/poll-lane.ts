import type { IncomingMessage, ServerResponse } from "node:http";
import { parse } from "node:querystring";
import { type Dispatcher } from "./dispatch";
import { type Exchange, addHeaders, observe, sendError } from "./http/exchange";
import type { Services } from "./http/context";

/** The one URL of the lane. */
const PATH = "/api/v1/events";

/**
 * What makes Express's URL parser (parseurl) fall back to Node's legacy one,
 * which reads a query string differently: such requests stay on Express's path.
 */
const UNUSUAL_URL = /[\t\n\f\r #\u00a0\ufeff]/;

/**
 * The poll lane: `GET /api/v1/events` (most of a chat server's requests: every
 * connected client holds one, and makes another after each answer) goes to the
 * dispatcher straight from Node's request, without Express's router and its
 * dozen middlewares. The request passes the same steps in the same order
 * (request id and access log, the security headers, realm, authentication,
 * rate limit, parameters, the operation, the envelope), so the bytes are
 * Express's: `test/poll-lane.test.ts` sends the same requests, well-formed and
 * hostile, to a server with the lane and one without and compares them.
 *
 * Only plain requests take it: GET of exactly this path, with no body (a body
 * goes through Express's parser, which may refuse it), no `Origin` (CORS
 * stays with its middleware) and an ordinary URL. Returns whether it took
 * the request.
 */
export function pollLane(
  services: Services,
  dispatch: Dispatcher,
  security: Map<string, string>,
): (req: IncomingMessage, res: ServerResponse) => boolean {
  const { logger } = services;
  return (req, res) => {
    const url = req.url ?? "";
    if (
      req.method !== "GET" ||
      !url.startsWith(PATH) ||
      (url.length > PATH.length && url.charCodeAt(PATH.length) !== 0x3f) /* ? */ ||
      req.headers.origin !== undefined ||
      req.headers["content-length"] !== undefined ||
      req.headers["transfer-encoding"] !== undefined ||
      UNUSUAL_URL.test(url)
    )
      return false;
    const exchange = observe(req, res, PATH, services);
    addHeaders(exchange, security);
    void answer(dispatch, req, res, exchange, logger);
    return true;
  };
}

/** The query string's fields of a lane URL (`PATH`, then `?` and the query, if any). */
const queryOf = (url: string): unknown =>
  url.length > PATH.length ? parse(url.slice(PATH.length + 1)) : {};

/**
 * Runs the poll and answers it, or its error. A function of its own, not a
 * closure made per request: a held poll keeps this frame while it waits.
 */
async function answer(
  dispatch: Dispatcher,
  req: IncomingMessage,
  res: ServerResponse,
  exchange: Exchange,
  logger: Services["logger"],
): Promise<void> {
  try {
    // No locals: what this frame holds while the poll waits is its parameters.
    await dispatch.run(req, res, dispatch.find("GET", "/events", exchange), exchange, {
      query: queryOf(req.url ?? ""),
      body: undefined,
    });
  } catch (error) {
    sendError(res, error, exchange, logger);
  }
}
