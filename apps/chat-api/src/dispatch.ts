import type { IncomingMessage, ServerResponse } from "node:http";
import { type JsonableError, renderSuccess } from "@repo/envelope";
import { type AuthedUser, authenticate } from "./caches/auth";
import type { Services } from "./http/context";
import { type Exchange, addHeaders, sendJson } from "./http/exchange";
import {
  type Api,
  type Operation,
  type UploadRoom,
  checkAccess,
  compileRoutes,
  matchRoute,
  readParams,
} from "./http/typed-endpoint";
import { receiveUpload } from "./http/upload-body";
import { removeFile } from "./lib/upload-store";
import { UserShare } from "./lib/concurrency";
import { MemoryBudget, defaultResidentBudget, processMemory } from "./lib/memory-budget";

/**
 * Form fields of a request, last value wins (as Django's QueryDict): body
 * fields first, then the query string, for POST/PATCH/PUT/DELETE; the query
 * string only for GET and HEAD.
 */
function collectFields(method: string, body: unknown, query: unknown): Map<string, string> {
  const fields = new Map<string, string>();
  const add = (source: unknown, overwrite: boolean): void => {
    if (source === null || typeof source !== "object") return;
    for (const [name, value] of Object.entries(source as Record<string, unknown>)) {
      const last = Array.isArray(value) ? (value as unknown[]).at(-1) : value;
      if (typeof last !== "string") continue;
      if (overwrite || !fields.has(name)) fields.set(name, last);
    }
  };
  if (method !== "GET" && method !== "HEAD") add(body, true);
  add(query, false);
  return fields;
}

/**
 * An upload's file limit: the operation's largest file, or less when the
 * user's room (a quota) is smaller, then refused with the quota's message.
 */
async function uploadLimit(
  maxBytes: number,
  room: UploadRoom | undefined,
  user: AuthedUser | undefined,
): Promise<{ fileBytes: number; overLimit?: () => JsonableError }> {
  if (room === undefined || user === undefined) return { fileBytes: maxBytes };
  const left = await room(user);
  return left.bytes < maxBytes
    ? { fileBytes: left.bytes, overLimit: left.error }
    : { fileBytes: maxBytes };
}

/** An operation found for a method and path. */
export type Match = ReturnType<typeof matchRoute>;

/** What a request gives the dispatcher besides its operation: its parsed query and body. */
export interface Input {
  /** The query string's fields (`node:querystring`, Express's "simple" parser). */
  query: unknown;
  /** The body's flat fields, if any was parsed. */
  body: unknown;
}

/**
 * The `/api/v1` dispatcher, in two steps around the body parsers: `find`
 * finds the operation (404 and 405 before any body is read), `run`
 * authenticates, limits, checks access, receives an upload, reads parameters,
 * runs and renders. It works on Node's request and response, so both paths
 * to an operation share it.
 */
export function dispatcher(services: Services, api: Api) {
  const routes = compileRoutes(api.operations);
  const shares = new UserShare(
    services.config.CHAT_MAX_REQUESTS_PER_USER,
    services.config.CHAT_MAX_QUEUED_PER_USER,
  );
  const { CHAT_MEMORY_BUDGET_MB } = services.config;
  const memory = new MemoryBudget(
    CHAT_MEMORY_BUDGET_MB === 0 ? defaultResidentBudget() : CHAT_MEMORY_BUDGET_MB * 1024 * 1024,
    processMemory,
    (over, figures) => {
      if (over) services.logger.warn(figures, "over the memory budget: refusing new requests");
      else services.logger.info(figures, "back under the memory budget");
    },
  );
  // Matches of paths without parameters, kept (a few hundred at most: the table's fixed paths).
  const fixed = new Map<string, Match>();
  const find = (method: string, path: string, exchange: Exchange): Match => {
    const key = `${method} ${path}`;
    let found = fixed.get(key);
    if (found === undefined) {
      found = matchRoute(routes, method, path);
      if (found.route.names.length === 0) fixed.set(key, found);
    }
    exchange.route = `/api/v1${found.route.template}`;
    return found;
  };
  const run = async (
    req: IncomingMessage,
    res: ServerResponse,
    { operation, pathParams }: Match,
    exchange: Exchange,
    input: Input,
  ): Promise<void> => {
    // Over the memory budget, nothing new starts (long-polls hold little and are answered).
    if (operation.operationId !== "get-events" && memory.exceeded()) throw MemoryBudget.refusal();
    const context = await services.realms.fromHost(req.headers.host);
    // No proxy is trusted: the peer's address (what Express's `req.ip` gives here).
    const ip = req.socket.remoteAddress ?? "";
    let user: AuthedUser | undefined;
    if (operation.auth === "user") {
      try {
        user = await authenticate(req.headers.authorization, context, services.auth);
      } catch (error) {
        // Failed logins count against the address, so a flood of bad keys meets 429s, not the database.
        addHeaders(exchange, Object.entries(await services.rateLimiter.consume("ip", ip)));
        throw error;
      }
    }
    addHeaders(
      exchange,
      Object.entries(
        await services.rateLimiter.consume(
          user === undefined ? "ip" : "user",
          user === undefined ? ip : String(user.id),
        ),
      ),
    );
    if (user !== undefined) checkAccess(operation.access, user);
    // A person's requests run within their share of the replica; long-polls hold no
    // connection while they wait and have their own limit.
    if (user === undefined || operation.operationId === "get-events")
      return perform(req, res, operation, pathParams, exchange, input, context, ip, user);
    const who = user;
    return shares.run(who.id, () =>
      perform(req, res, operation, pathParams, exchange, input, context, ip, who),
    );
  };
  /** Receives the upload, reads the parameters, runs the handler and answers. */
  const perform = async (
    req: IncomingMessage,
    res: ServerResponse,
    operation: Operation,
    pathParams: Match["pathParams"],
    exchange: Exchange,
    input: Input,
    context: Awaited<ReturnType<Services["realms"]["fromHost"]>>,
    ip: string,
    user: AuthedUser | undefined,
  ): Promise<void> => {
    const upload = operation.upload
      ? await receiveUpload(req, {
          ...(await uploadLimit(
            (operation.upload.maxMib ?? services.config.CHAT_MAX_UPLOAD_MIB) * 1024 * 1024,
            operation.upload.room,
            user,
          )),
          fieldBytes: services.config.CHAT_MAX_BODY_BYTES,
          directory: services.uploads.incoming,
        })
      : undefined;
    try {
      const fields = collectFields(
        req.method ?? "",
        upload === undefined ? input.body : upload.fields,
        input.query,
      );
      const { values, read } = readParams(
        operation.params,
        fields,
        services.config.CHAT_MAX_JSON_DEPTH,
      );
      const file = upload?.file;
      const data = await operation.handler({
        ...(file === undefined ? {} : { file }),
        realm: context.realm,
        ...(user === undefined ? {} : { user }),
        path: pathParams,
        params: values,
        request: {
          id: exchange.id,
          ip,
          userAgent: req.headers["user-agent"] ?? "",
          subdomain: context.subdomain,
          client: exchange,
        },
      });
      const ignored = [...fields.keys()].filter((name) => !read.has(name));
      sendJson(res, exchange, 200, operation.bare ? data : renderSuccess(data, ignored));
    } finally {
      // Gone already when the store took it.
      if (upload?.file !== undefined) await removeFile(upload.file.tempPath);
    }
  };
  return { find, run };
}

/** The dispatcher of an application. */
export type Dispatcher = ReturnType<typeof dispatcher>;
