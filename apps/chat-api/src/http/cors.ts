import cors from "cors";
import type { RequestHandler } from "express";

/** Response headers a browser client may read (request ids and the rate-limit state). */
const EXPOSED_HEADERS = [
  "X-Request-Id",
  "Retry-After",
  "X-RateLimit-Limit",
  "X-RateLimit-Remaining",
  "X-RateLimit-Reset",
];

/**
 * Cross-origin access for the origins of CHAT_CORS_ORIGINS (`*` for any), or
 * none when the list is empty. Listed origins may send credentials and the
 * `Authorization` header (HTTP Basic with an API key); a wildcard never comes
 * with credentials. Preflights are answered 204 and cached for two hours;
 * a refused origin gets no CORS headers (its preflight falls through to the
 * API's own 405).
 */
export function corsMiddleware(origins: readonly string[]): RequestHandler | undefined {
  if (origins.length === 0) return undefined;
  const any = origins.includes("*");
  return cors({
    origin: (origin, callback) => {
      const allowed = origin !== undefined && (any || origins.includes(origin));
      callback(null, allowed ? (any ? "*" : origin) : false);
    },
    methods: ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"],
    allowedHeaders: ["Authorization", "Content-Type", "X-Requested-With", "X-Request-Id"],
    exposedHeaders: EXPOSED_HEADERS,
    credentials: !any,
    maxAge: 7200,
    optionsSuccessStatus: 204,
  });
}
