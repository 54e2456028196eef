import { randomUUID } from "node:crypto";
import { JsonableError, renderError, renderSuccess } from "@repo/envelope";
import { corsMiddleware } from "./lib/cors";
import express, { type ErrorRequestHandler, type Request, type RequestHandler } from "express";
import helmet from "helmet";
import multer from "multer";
import { pinoHttp } from "pino-http";
import { type AuthedUser, authenticate } from "./lib/auth";
import { type Api, checkAccess, compileRoutes, matchRoute, readParams } from "./lib/typed-endpoint";
import { buildApi } from "./routes";
import type { Services } from "./services";

const REQUEST_ID = /^[\w.-]{1,64}$/;

/**
 * Form fields of a request, last value wins (as Django's QueryDict): body
 * fields first, then the query string, for POST/PATCH/PUT/DELETE; the query
 * string only for GET and HEAD.
 */
function collectFields(req: Request): Map<string, string> {
  const fields = new Map<string, string>();
  const add = (source: unknown, overwrite: boolean): void => {
    if (source === null || typeof source !== "object") return;
    for (const [name, value] of Object.entries(source as Record<string, unknown>)) {
      const last = Array.isArray(value) ? (value as unknown[]).at(-1) : value;
      if (typeof last !== "string") continue;
      if (overwrite || !fields.has(name)) fields.set(name, last);
    }
  };
  if (req.method !== "GET" && req.method !== "HEAD") add(req.body, true);
  add(req.query, false);
  return fields;
}

/** The `/api/v1` dispatcher: match, authenticate, limit, check access, read parameters, run, render. */
function dispatcher(services: Services, api: Api): RequestHandler {
  const routes = compileRoutes(api.operations);
  return async (req, res) => {
    const { operation, route, pathParams } = matchRoute(routes, req.method, req.path);
    res.locals.route = `/api/v1${route.template}`;
    const context = await services.realms.fromHost(req.headers.host);
    const ip = req.ip ?? "";
    let user: AuthedUser | undefined;
    if (operation.auth === "user") {
      try {
        user = await authenticate(req.headers.authorization, context, services.auth);
      } catch (error) {
        // Failed logins count against the address, so a flood of bad keys meets 429s, not the database.
        res.set(await services.rateLimiter.consume("ip", ip));
        throw error;
      }
    }
    res.set(
      await services.rateLimiter.consume(
        user === undefined ? "ip" : "user",
        user === undefined ? ip : String(user.id),
      ),
    );
    if (user !== undefined) checkAccess(operation.access, user);
    const fields = collectFields(req);
    const { values, read } = readParams(
      operation.params,
      fields,
      services.config.CHAT_MAX_JSON_DEPTH,
    );
    // Aborts when the client goes away before the answer (a long-poll stops waiting).
    const gone = new AbortController();
    res.on("close", () => {
      if (!res.writableFinished) gone.abort();
    });
    const data = await operation.handler({
      realm: context.realm,
      ...(user === undefined ? {} : { user }),
      path: pathParams,
      params: values,
      request: {
        id: String(res.getHeader("X-Request-Id") ?? ""),
        ip: req.ip ?? "",
        userAgent: req.headers["user-agent"] ?? "",
        subdomain: context.subdomain,
        signal: gone.signal,
      },
    });
    const ignored = [...fields.keys()].filter((name) => !read.has(name));
    res.status(200).json(operation.bare ? data : renderSuccess(data, ignored));
  };
}

/** Body-parser failures are the client's: a 4xx in the envelope, never a 500. */
function clientError(error: unknown): JsonableError | undefined {
  const { status, type } = (error ?? {}) as { status?: unknown; type?: unknown };
  if (typeof status !== "number" || status < 400 || status >= 500) return undefined;
  if (type === "entity.too.large")
    return new JsonableError("Request body too large", "BAD_REQUEST", 413);
  return new JsonableError("Malformed request body", "BAD_REQUEST", status === 415 ? 415 : 400);
}

/** createApp(services): the Express application, not yet listening. */
export function createApp(services: Services, api: Api = buildApi(services)): express.Express {
  const { logger, metrics, db } = services;
  const app = express();
  app.disable("x-powered-by");
  app.set("etag", false);

  app.use((req, res, next) => {
    const stop = metrics.latency.startTimer();
    res.once("finish", () => {
      const route = typeof res.locals.route === "string" ? res.locals.route : "unmatched";
      stop({ method: req.method, route });
      metrics.requests.inc({ method: req.method, route, status: String(res.statusCode) });
    });
    next();
  });
  app.use(
    pinoHttp({
      logger,
      genReqId: (req, res) => {
        const given = req.headers["x-request-id"];
        const id = typeof given === "string" && REQUEST_ID.test(given) ? given : randomUUID();
        res.setHeader("X-Request-Id", id);
        return id;
      },
      // Only what is safe: never headers (Authorization) or bodies (passwords, keys).
      serializers: {
        req: (req: { id: unknown; method: string; url: string; remoteAddress?: string }) => ({
          id: req.id,
          method: req.method,
          path: req.url.split("?")[0],
          remoteAddress: req.remoteAddress,
        }),
        res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
      },
      customLogLevel: (_req, res, error) =>
        error !== undefined || res.statusCode >= 500 ? "error" : "info",
    }),
  );

  // Security headers on every answer (the API serves JSON only: nothing may frame,
  // sniff or embed it; browsers keep to HTTPS once they have used it).
  app.use(
    helmet({
      contentSecurityPolicy: { directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] } },
      // With an allow-list, browser clients of other origins read answers through CORS.
      crossOriginResourcePolicy: {
        policy: services.config.CHAT_CORS_ORIGINS.length > 0 ? "cross-origin" : "same-origin",
      },
    }),
  );
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
  const multipart = multer({ limits: { fieldSize: bodyLimit, fields: 1000, files: 0 } }).none();
  // Anything the multipart parser fails on is the body's fault (busboy throws plain Errors).
  const forms: RequestHandler = (req, res, next) => {
    multipart(req, res, (error?: unknown) => {
      next(error === undefined ? undefined : new JsonableError("Malformed multipart body"));
    });
  };
  app.use(
    "/api/v1",
    express.urlencoded({ extended: false, limit: bodyLimit, parameterLimit: 1000 }),
    forms,
    dispatcher(services, api),
  );
  app.use((_req, _res, next) => {
    next(new JsonableError("Not found", "NOT_FOUND", 404));
  });

  const errors: ErrorRequestHandler = (error: unknown, req, res, _next) => {
    const { status, headers, body } = renderError(clientError(error) ?? error);
    if (status >= 500) logger.error({ err: error, reqId: req.id }, "unhandled error");
    res.status(status).set(headers).json(body);
  };
  app.use(errors);
  return app;
}
