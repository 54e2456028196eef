import type http from "node:http";
import type http2 from "node:http2";
import { cors as connectCors } from "@connectrpc/connect";
import cors from "cors";

type Request = http.IncomingMessage | http2.Http2ServerRequest;
type Response = http.ServerResponse | http2.Http2ServerResponse;

/** The origins of SCOREBOARD_CORS_ORIGINS (comma-separated; `*` for any). */
export function parseOrigins(text: string): string[] {
  return text
    .split(",")
    .map((o) => o.trim())
    .filter((o) => o !== "");
}

/**
 * Cross-origin access for browser clients (connect-web, gRPC-Web) from
 * `origins`, or none when the list is empty: the methods and request headers
 * Connect and gRPC-Web need, the response headers they read (connect-es
 * exports both lists, plus `ETag` for the cache), preflights answered 204 and
 * cached for two hours. The board is public, so no credentials are ever
 * allowed. A refused origin gets no CORS headers; its preflight is answered
 * 403. Calls `next` for everything that is not a preflight.
 */
export function corsHandler(
  origins: readonly string[],
): ((req: Request, res: Response, next: () => void) => void) | undefined {
  if (origins.length === 0) return undefined;
  const any = origins.includes("*");
  const middleware = cors({
    origin: (origin, callback) => {
      callback(null, origin !== undefined && (any || origins.includes(origin)) ? origin : false);
    },
    methods: [...connectCors.allowedMethods],
    allowedHeaders: [...connectCors.allowedHeaders],
    exposedHeaders: [...connectCors.exposedHeaders, "ETag", "Cache-Control"],
    credentials: false,
    maxAge: 7200,
    optionsSuccessStatus: 204,
  });
  return (req, res, next) => {
    middleware(req, res, () => {
      if (req.method === "OPTIONS" && req.headers["access-control-request-method"] !== undefined) {
        // A preflight the allow-list refused.
        res.statusCode = 403;
        res.end();
        return;
      }
      next();
    });
  };
}
