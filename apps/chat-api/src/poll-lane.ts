import type { IncomingMessage, ServerResponse } from "node:http";
import { parse } from "node:querystring";
import { type Dispatcher } from "./dispatch";
import { addHeaders, observe, sendError } from "./http/exchange";
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
    const answer = async (): Promise<void> => {
      const found = dispatch.find("GET", "/events", exchange);
      const query = url.length > PATH.length ? parse(url.slice(PATH.length + 1)) : {};
      await dispatch.run(req, res, found, exchange, { query, body: undefined });
    };
    answer().catch((error: unknown) => {
      sendError(res, error, exchange, logger);
    });
    return true;
  };
}
