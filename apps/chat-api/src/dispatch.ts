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
import { type ReceivedFile, receiveUpload } from "./http/upload-body";
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
  if (method !== "GET" && method !== "HEAD") addFields(fields, body, true);
  addFields(fields, query, false);
  return fields;
}

/** Adds the string fields of `source` (an array's last item for a repeated field). */
function addFields(fields: Map<string, string>, source: unknown, overwrite: boolean): void {
  if (source === null || typeof source !== "object") return;
  const record = source as Record<string, unknown>;
  // Keys, then each value: no array of pairs per request, as Object.entries would make.
  for (const name of Object.keys(record)) {
    const value = record[name];
    const last = Array.isArray(value) ? (value as unknown[]).at(-1) : value;
    if (typeof last !== "string") continue;
    if (overwrite || !fields.has(name)) fields.set(name, last);
  }
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

/** No names ignored: the common case, one array for all of them. */
const NONE_IGNORED: readonly string[] = Object.freeze([]);

/** The operation's parameters read from `fields`, and the names of the fields it did not read. */
function readFields(
  operation: Operation,
  fields: Map<string, string>,
  maxJsonDepth: number,
): { values: ReturnType<typeof readParams>["values"]; ignored: readonly string[] } {
  const { values, read } = readParams(operation.params, fields, maxJsonDepth);
  let ignored: string[] | undefined;
  for (const name of fields.keys()) if (!read.has(name)) (ignored ??= []).push(name);
  return { values, ignored: ignored ?? NONE_IGNORED };
}

/**
 * Writes the handler's result once it is there: a frame of five values,
 * which is all a long-poll keeps of the dispatcher while it waits.
 */
async function answerWhenDone(
  res: ServerResponse,
  exchange: Exchange,
  bare: boolean,
  ignored: readonly string[],
  pending: Promise<object> | object,
): Promise<void> {
  const data = await pending;
  sendJson(res, exchange, 200, bare ? data : renderSuccess(data, ignored));
}

/** The realm a request is for, and its subdomain. */
type Context = Awaited<ReturnType<Services["realms"]["fromHost"]>>;

/** A request that passed authentication, the rate limit and the access check, with all it needs. */
interface Admitted {
  req: IncomingMessage;
  res: ServerResponse;
  operation: Operation;
  pathParams: Match["pathParams"];
  exchange: Exchange;
  input: Input;
  context: Context;
  /** The peer's address. */
  ip: string;
  user: AuthedUser | undefined;
}

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
  // Each route's metrics label, made once (a label made per request is a string a long-poll keeps).
  const labels = new Map<Match["route"], string>();
  const find = (method: string, path: string, exchange: Exchange): Match => {
    const key = `${method} ${path}`;
    let found = fixed.get(key);
    if (found === undefined) {
      found = matchRoute(routes, method, path);
      if (found.route.names.length === 0) fixed.set(key, found);
    }
    let label = labels.get(found.route);
    if (label === undefined) {
      label = `/api/v1${found.route.template}`;
      labels.set(found.route, label);
    }
    exchange.route = label;
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
    const admitted: Admitted = {
      req,
      res,
      operation,
      pathParams,
      exchange,
      input,
      context,
      ip,
      user,
    };
    // A person's requests run within their share of the replica; long-polls hold no
    // connection while they wait and have their own limit.
    if (user === undefined || operation.operationId === "get-events") return perform(admitted);
    return shares.run(user.id, () => perform(admitted));
  };
  /**
   * Receives the upload, if the operation takes one, then runs it ({@link handle}); the
   * upload's file is removed once the answer is written.
   */
  const perform = async (admitted: Admitted): Promise<void> => {
    const { req, operation, input, user } = admitted;
    // Without an upload, nothing is awaited here: a long-poll waiting in its handler keeps
    // none of this frame.
    if (operation.upload === false) return handle(admitted);
    const upload = await receiveUpload(req, {
      ...(await uploadLimit(
        (operation.upload.maxMib ?? services.config.CHAT_MAX_UPLOAD_MIB) * 1024 * 1024,
        operation.upload.room,
        user,
      )),
      fieldBytes: services.config.CHAT_MAX_BODY_BYTES,
      directory: services.uploads.incoming,
    });
    try {
      await handle(
        { ...admitted, input: { query: input.query, body: upload.fields } },
        upload.file,
      );
    } finally {
      // Gone already when the store took it.
      if (upload.file !== undefined) await removeFile(upload.file.tempPath);
    }
  };
  /**
   * Reads the parameters and starts the handler; the answer is written when it
   * is done ({@link answerWhenDone}), not in this frame.
   */
  const handle = async (
    { req, res, operation, pathParams, exchange, input, context, ip, user }: Admitted,
    file?: ReceivedFile,
  ): Promise<void> => {
    const { values, ignored } = readFields(
      operation,
      collectFields(req.method ?? "", input.body, input.query),
      services.config.CHAT_MAX_JSON_DEPTH,
    );
    const data = operation.handler({
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
    return answerWhenDone(res, exchange, operation.bare, ignored, data);
  };
  return { find, run };
}

/** The dispatcher of an application. */
export type Dispatcher = ReturnType<typeof dispatcher>;
