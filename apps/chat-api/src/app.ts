import { randomUUID } from "node:crypto";
import { JsonableError, PathNotFoundError, renderError, renderSuccess } from "@repo/envelope";
import { corsMiddleware } from "./lib/cors";
import express, {
  type ErrorRequestHandler,
  type Request,
  type RequestHandler,
  type Response,
} from "express";
import helmet from "helmet";
import { databaseUnavailableError, isDatabaseUnavailable } from "./db/unavailable";
import { type AuthedUser, authenticate } from "./lib/auth";
import { MAX_FORM_FIELDS, multipartForms } from "./lib/multipart";
import { type ReceivedFile, receiveUpload } from "./lib/upload-body";
import { removeFile } from "./lib/upload-store";
import { type Api, checkAccess, compileRoutes, matchRoute, readParams } from "./lib/typed-endpoint";
import { fileRoutes } from "./routes/files";
import { buildApi } from "./urls";
import type { Services } from "./services";
import { answeringAfterEvents } from "./events/queue";

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

/** A signal that aborts when the client goes away before the answer (a long-poll stops waiting). */
function goneSignal(res: Response): AbortSignal {
  const known = res.locals.gone as AbortSignal | undefined;
  if (known !== undefined) return known;
  const gone = new AbortController();
  if (res.destroyed && !res.writableFinished) gone.abort();
  else
    res.once("close", () => {
      if (!res.writableFinished) gone.abort();
    });
  res.locals.gone = gone.signal;
  return gone.signal;
}

/** A JSON answer, written at once (what `res.json` does for this API, without its checks). */
function sendJson(res: Response, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.statusCode = status;
  res.setHeader("Content-Type", "application/json; charset=utf-8");
  res.setHeader("Content-Length", Buffer.byteLength(text));
  res.end(res.req.method === "HEAD" ? undefined : text);
}

type Match = ReturnType<typeof matchRoute>;

/** A request past its checks, ready for its operation. */
interface Ready {
  operation: Match["operation"];
  pathParams: Match["pathParams"];
  context: Awaited<ReturnType<Services["realms"]["fromHost"]>>;
  user: AuthedUser | undefined;
  file: ReceivedFile | undefined;
}

/**
 * The `/api/v1` dispatcher, in two steps around the body parsers: `match`
 * finds the operation (404 and 405 before any body is read), `run`
 * authenticates, limits, checks access, receives an upload, reads parameters,
 * runs and renders.
 */
function dispatcher(services: Services, api: Api) {
  const routes = compileRoutes(api.operations);
  const matches = new WeakMap<Request, Match>();
  const match: RequestHandler = (req, res, next) => {
    const found = matchRoute(routes, req.method, req.path);
    res.locals.route = `/api/v1${found.route.template}`;
    matches.set(req, found);
    next();
  };
  const isUpload = (req: Request): boolean => matches.get(req)?.operation.upload === true;
  const run: RequestHandler = async (req, res) => {
    const found = matches.get(req);
    if (found === undefined) throw new PathNotFoundError();
    const { operation, pathParams } = found;
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
    const file = operation.upload
      ? await receiveUpload(req, {
          fileBytes: services.config.CHAT_MAX_UPLOAD_MIB * 1024 * 1024,
          fieldBytes: services.config.CHAT_MAX_BODY_BYTES,
          directory: services.uploads.incoming,
        })
      : undefined;
    if (file !== undefined) req.body = file.fields;
    try {
      await answer(req, res, { operation, pathParams, context, user, file: file?.file });
    } finally {
      // Gone already when the store took it.
      if (file?.file !== undefined) await removeFile(file.file.tempPath);
    }
  };
  const answer = async (
    req: Request,
    res: Response,
    { operation, pathParams, context, user, file }: Ready,
  ): Promise<void> => {
    const fields = collectFields(req);
    const { values, read } = readParams(
      operation.params,
      fields,
      services.config.CHAT_MAX_JSON_DEPTH,
    );
    const data = await answeringAfterEvents(services.events, () =>
      operation.handler({
        ...(file === undefined ? {} : { file }),
        realm: context.realm,
        ...(user === undefined ? {} : { user }),
        path: pathParams,
        params: values,
        request: {
          id: String(res.getHeader("X-Request-Id") ?? ""),
          ip: req.ip ?? "",
          userAgent: req.headers["user-agent"] ?? "",
          subdomain: context.subdomain,
          // Made on first use (a long-poll's): most operations never look.
          get signal() {
            return goneSignal(res);
          },
        },
      }),
    );
    const ignored = [...fields.keys()].filter((name) => !read.has(name));
    sendJson(res, 200, operation.bare ? data : renderSuccess(data, ignored));
  };
  return { match, isUpload, run };
}

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

  // Request id, metrics and the access log, from one listener per request.
  app.use((req, res, next) => {
    const given = req.headers["x-request-id"];
    const id = typeof given === "string" && REQUEST_ID.test(given) ? given : randomUUID();
    res.setHeader("X-Request-Id", id);
    res.locals.requestId = id;
    // Read now: routers mounted under a prefix change req.url while they run.
    const { method, path } = req;
    const stop = metrics.latency.startTimer();
    res.once("close", () => {
      const route = typeof res.locals.route === "string" ? res.locals.route : "unmatched";
      // Only what is safe: never headers (Authorization), query strings or bodies (keys, passwords).
      const entry = {
        req: { id, method, path, remoteAddress: req.socket.remoteAddress },
        res: { statusCode: res.statusCode },
      };
      if (!res.writableFinished) {
        logger.warn(entry, "request aborted");
        return;
      }
      const seconds = stop({ method, route });
      metrics.requests.inc({ method, route, status: String(res.statusCode) });
      logger[res.statusCode >= 500 ? "error" : "info"](
        { ...entry, responseTime: Math.round(seconds * 1000) },
        "request completed",
      );
    });
    next();
  });

  // Security headers on every answer (the API serves JSON only: nothing may frame,
  // sniff or embed it; browsers keep to HTTPS once they have used it).
  const security = fixedHeaders(
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
    }),
  );
  app.use((_req, res, next) => {
    res.setHeaders(security);
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
  const api1 = dispatcher(services, api);
  app.use(
    "/api/v1",
    api1.match,
    express.urlencoded({ extended: false, limit: bodyLimit, parameterLimit: MAX_FORM_FIELDS }),
    multipartForms(bodyLimit, api1.isUpload),
    api1.run,
  );
  app.use(fileRoutes(services));
  app.use((_req, _res, next) => {
    next(new PathNotFoundError());
  });

  const errors: ErrorRequestHandler = (error: unknown, _req, res, _next) => {
    const reqId: unknown = res.locals.requestId;
    if (isDatabaseUnavailable(error)) {
      // Not a defect: the request may succeed once the database is back.
      logger.warn({ err: error, reqId }, "database unavailable");
      error = databaseUnavailableError();
    }
    const { status, headers, body } = renderError(clientError(error) ?? error);
    if (status >= 500 && status !== 503) logger.error({ err: error, reqId }, "unhandled error");
    res.status(status).set(headers).json(body);
  };
  app.use(errors);
  return app;
}
