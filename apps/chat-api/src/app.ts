import type { IncomingMessage, RequestListener, ServerResponse } from "node:http";
import { PathNotFoundError } from "@repo/envelope";
import { corsMiddleware } from "./http/cors";
import express, { type ErrorRequestHandler, type RequestHandler } from "express";
import helmet from "helmet";
import { MAX_FORM_FIELDS, multipartForms } from "./http/multipart";
import type { Api } from "./http/typed-endpoint";
import { staticRoutes } from "./routes/static-files";
import { accountPages } from "./pages/account-pages";
import { fileRoutes } from "./routes/files";
import { buildApi } from "./urls";
import type { Services } from "./http/context";
import { type Match, dispatcher } from "./dispatch";
import {
  EXCHANGE,
  addHeaders,
  applyHeaders,
  exchangeOf,
  observe,
  sendError,
} from "./http/exchange";
import { pollLane } from "./poll-lane";

/**
 * The headers a middleware that only sets fixed headers (helmet, as configured
 * here: no nonces) sets, worked out once, so each request sets them in one call
 * instead of running its dozen middlewares (7 % of a short request's CPU profile).
 */
function fixedHeaders(
  middleware: (req: never, res: never, next: (error?: unknown) => void) => void,
): Map<string, string> {
  const headers = new Map<string, string>();
  const res = {
    setHeader(name: string, value: string) {
      headers.set(name, value);
    },
    removeHeader(name: string) {
      headers.delete(name);
    },
  };
  const outcome: { done: boolean; error?: unknown } = { done: false };
  middleware({} as never, res as never, (error) => {
    outcome.done = true;
    outcome.error = error;
  });
  if (!outcome.done || outcome.error !== undefined)
    throw new Error("the header middleware did not set its headers at once");
  return headers;
}

/**
 * The security headers of every answer (the API serves JSON and uploaded
 * files, never pages: nothing may frame, sniff or embed it; browsers keep to
 * HTTPS once they have used it). OWASP's set for REST answers; helmet's
 * headers for HTML documents (opener and agent-cluster isolation, DNS
 * prefetching, old IE's download and XSS-filter switches, Flash's
 * cross-domain policies) are off: every answer carries its headers, and each
 * costs the server and every client parsing it (docs/benchmarks.md).
 */
export function securityHeaders(services: Services): Map<string, string> {
  return fixedHeaders(
    helmet({
      // JSON only: nothing to load, so none of helmet's defaults for pages (a shorter header).
      contentSecurityPolicy: {
        useDefaults: false,
        directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] },
      },
      // With an allow-list, browser clients of other origins read answers through CORS.
      crossOriginResourcePolicy: {
        policy: services.config.CHAT_CORS_ORIGINS.length > 0 ? "cross-origin" : "same-origin",
      },
      xFrameOptions: { action: "deny" },
      crossOriginOpenerPolicy: false,
      originAgentCluster: false,
      xDnsPrefetchControl: false,
      xDownloadOptions: false,
      xPermittedCrossDomainPolicies: false,
      xXssProtection: false,
    }),
  );
}

/** Options of {@link createApp}. */
export interface AppOptions {
  /** Whether `GET /api/v1/events` takes the poll lane (default true; tests compare both paths). */
  pollLane?: boolean;
}

/**
 * createApp(services): the request handler, not yet listening: the poll lane
 * (`src/poll-lane.ts`), and Express for every other request.
 */
export function createApp(
  services: Services,
  api: Api = buildApi(services),
  options: AppOptions = {},
): RequestListener {
  const { logger, db } = services;
  const app = express();
  app.disable("x-powered-by");
  app.set("etag", false);

  // Request id, metrics and the access log, from one listener per request; the
  // security headers. Set on the response at once: Express may write the answer.
  const security = securityHeaders(services);
  app.use((req, res, next) => {
    const exchange = observe(req, res, req.path, services);
    res.locals[EXCHANGE] = exchange;
    addHeaders(exchange, security);
    applyHeaders(res, exchange);
    next();
  });
  const crossOrigin = corsMiddleware(services.config.CHAT_CORS_ORIGINS);
  if (crossOrigin !== undefined) app.use(crossOrigin);

  app.get("/healthz", (_req, res) => {
    res.json({ status: "ok" });
  });
  app.get("/readyz", async (_req, res) => {
    const up = await db.ping();
    res.status(up ? 200 : 503).json({ status: up ? "ok" : "database unavailable" });
  });

  const bodyLimit = services.config.CHAT_MAX_BODY_BYTES;
  const dispatch = dispatcher(services, api);
  // The operation is found before the body parsers run: 404 and 405 before any body is read.
  const matches = new WeakMap<IncomingMessage, Match>();
  const match: RequestHandler = (req, res, next) => {
    matches.set(req, dispatch.find(req.method, req.path, exchangeOf(res)));
    next();
  };
  const isUpload = (req: IncomingMessage): boolean =>
    (matches.get(req)?.operation.upload ?? false) !== false;
  const run: RequestHandler = async (req, res) => {
    const found = matches.get(req);
    if (found === undefined) throw new PathNotFoundError();
    await dispatch.run(req, res, found, exchangeOf(res), { query: req.query, body: req.body });
  };
  app.use(
    "/api/v1",
    match,
    express.urlencoded({ extended: false, limit: bodyLimit, parameterLimit: MAX_FORM_FIELDS }),
    multipartForms(bodyLimit, isUpload),
    run,
  );
  app.use(accountPages(services));
  app.use(fileRoutes(services));
  app.use(staticRoutes());
  app.use((_req, _res, next) => {
    next(new PathNotFoundError());
  });

  const errors: ErrorRequestHandler = (error: unknown, _req, res, _next) => {
    sendError(res, error, exchangeOf(res), logger);
  };
  app.use(errors);

  if (options.pollLane === false) return app;
  const lane = pollLane(services, dispatch, security);
  return (req: IncomingMessage, res: ServerResponse) => {
    if (!lane(req, res)) void app(req, res);
  };
}
