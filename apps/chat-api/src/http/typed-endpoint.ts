import {
  JsonableError,
  MethodNotAllowedError,
  OrganizationAdministratorRequiredError,
  OrganizationOwnerRequiredError,
  PathNotFoundError,
  RequestConfusingVarError,
  RequestVariableMissingError,
} from "@repo/envelope";
import type { Realm } from "../gen/prisma/client";
import type { AuthedUser } from "../caches/auth";
import type { ReceivedFile } from "./upload-body";
import { isAdministrator, isGuest, isOwner } from "../lib/roles";
import { type Param, type ParamValues, isIntPath, jsonDepth } from "./params";
import type { Client } from "../realtime/polls";

/** HTTP methods operations use. */
export type Method = "GET" | "POST" | "PATCH" | "PUT" | "DELETE";

/** The names of the `{...}` segments of a path template. */
export type PathParamNames<P extends string> = P extends `${string}{${infer Name}}${infer Rest}`
  ? Name | PathParamNames<Rest>
  : never;

/**
 * The value of a path parameter named `Name`: a parameter whose name ends in
 * `_id` is an id (digits that fit an int32, else the path is unknown); any
 * other (`{email}`) is the segment's text, percent-decoded.
 */
export type PathValue<Name extends string> = Name extends `${string}_id` ? number : string;

/** `{ draft_id: number }` from `"/drafts/{draft_id}"`, `{ email: string }` from `"/users/{email}"`. */
export type PathParams<P extends string> = { [K in PathParamNames<P>]: PathValue<K> };

/** Whether path parameter `name` is an id (see {@link PathValue}). */
export const isIdParam = (name: string): boolean => name.endsWith("_id");

/**
 * Whether path parameter `name` is the rest of the path, slashes included
 * (Zulip's `<path:filename>` in `/user_uploads/{realm_id_str}/{filename}`, and
 * `<path:fragment>` in `/navigation_views/{fragment}`); it
 * must be the template's last segment.
 */
export const isRestParam = (name: string): boolean => name === "filename" || name === "fragment";

/** Who may call an operation beyond "any authenticated user". */
export interface Access {
  /** Bots may call it (default true); else `This endpoint does not accept bot requests.` */
  bots?: boolean;
  /** Guests may call it (default true); else `Not allowed for guest users`. */
  guests?: boolean;
  /** Only organization administrators, or only owners. */
  role?: "administrator" | "owner";
}

/** Facts about the request a handler may use (never `req` itself). */
export interface RequestInfo {
  id: string;
  ip: string;
  userAgent: string;
  /** The request's subdomain, even when no realm has it. */
  subdomain: string;
  /** The client: whether it went away before the answer, and a listener for that. */
  client: Client;
}

interface BaseContext<Path, Params> {
  path: Path;
  params: Params;
  request: RequestInfo;
  /** The file of an `upload` operation's body (always there for one; never for others). */
  file?: ReceivedFile;
}

/** What a public operation's handler receives. */
export interface PublicContext<Path, Params> extends BaseContext<Path, Params> {
  realm: Realm | undefined;
}

/** What an authenticated operation's handler receives. */
export interface UserContext<Path, Params> extends BaseContext<Path, Params> {
  realm: Realm;
  user: AuthedUser;
}

/** A registered operation, types erased: what the dispatcher and the OpenAPI builder read. */
export interface Operation {
  method: Method;
  path: string;
  operationId: string;
  summary: string;
  deprecated: boolean;
  tag: string;
  bare: boolean;
  /** Whether the body carries a file, and its largest size (MiB; CHAT_MAX_UPLOAD_MIB when undefined). */
  upload: false | { maxMib: number | undefined; room: UploadRoom | undefined };
  auth: "public" | "user";
  access: Access;
  params: Record<string, Param<unknown, unknown>>;
  handler: (
    context: PublicContext<Record<string, number | string>, Record<string, unknown>> & {
      user?: AuthedUser;
    },
  ) => Promise<object> | object;
}

/** What a view declares beyond its parameters: authentication aside, everything but its URL. */
export interface EndpointSpec<
  Ps extends Record<string, Param<unknown, unknown>>,
  Names extends string,
> {
  /** A stable name for the OpenAPI document (Zulip's operation ids). */
  operationId: string;
  summary: string;
  deprecated?: boolean;
  tag: string;
  params: Ps;
  /** The path parameters the handler reads; the URL it is bound to must have exactly these. */
  pathParams?: readonly Names[];
  /** Send the handler's result as the whole body, without the success envelope (documents, not API data). */
  bare?: boolean;
  /**
   * The body is `multipart/form-data` with one file, received (after
   * authentication) into a temporary file within CHAT_MAX_UPLOAD_MIB (or
   * `maxMib`) and handed to the handler as `file`; other operations refuse files.
   */
  upload?: true | { maxMib?: number; room?: UploadRoom };
}

/**
 * What a user may still store, asked before an upload's body is read: a
 * file larger than that is refused from its Content-Length, or as soon as
 * its bytes pass it, with `error` (a quota's message).
 */
export type UploadRoom = (
  user: AuthedUser,
) => Promise<{ bytes: number; error: () => JsonableError }>;

/**
 * An operation not yet bound to a URL: what a route module returns, and what
 * `src/urls.ts` binds to a method and a path with {@link url}.
 */
export interface Endpoint<Names extends string> {
  readonly auth: "public" | "user";
  readonly access: Access;
  readonly spec: EndpointSpec<Record<string, Param<unknown, unknown>>, Names>;
  readonly handler: Operation["handler"];
  /** The names of its path parameters, read and written: a view fits only a URL with exactly these. */
  readonly pathNames: (names: Names) => Names;
}

/** An operation that needs no authentication. */
export function publicEndpoint<
  Ps extends Record<string, Param<unknown, unknown>>,
  const Names extends string = never,
>(
  spec: EndpointSpec<Ps, Names>,
  handler: (
    context: PublicContext<{ [K in Names]: PathValue<K> }, ParamValues<Ps>>,
  ) => Promise<object> | object,
): Endpoint<Names> {
  return {
    auth: "public",
    access: {},
    spec,
    handler: handler as Operation["handler"],
    pathNames: (names) => names,
  };
}

/** An operation for authenticated users (HTTP Basic with an API key), with its access rules. */
export function userEndpoint<
  Ps extends Record<string, Param<unknown, unknown>>,
  const Names extends string = never,
>(
  spec: EndpointSpec<Ps, Names> & { access?: Access },
  handler: (
    context: UserContext<{ [K in Names]: PathValue<K> }, ParamValues<Ps>>,
  ) => Promise<object> | object,
): Endpoint<Names> {
  return {
    auth: "user",
    access: spec.access ?? {},
    spec,
    handler: handler as unknown as Operation["handler"],
    pathNames: (names) => names,
  };
}

/**
 * One row of the URL table: `view` served at `method` `path`. The compiler
 * checks that the path's `{...}` segments are the view's path parameters, and
 * so does this function when the table is built.
 */
export function url<P extends string>(
  method: Method,
  path: P,
  view: Endpoint<PathParamNames<P>>,
): Operation {
  const inPath = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();
  const declared = [...(view.spec.pathParams ?? [])].sort();
  if (inPath.join() !== declared.join())
    throw new Error(`${method} ${path}: the view reads path parameters [${declared.join()}]`);
  const { operationId, summary, tag, params } = view.spec;
  return {
    method,
    path,
    operationId,
    summary,
    tag,
    params,
    deprecated: view.spec.deprecated ?? false,
    bare: view.spec.bare ?? false,
    upload:
      view.spec.upload === undefined
        ? false
        : view.spec.upload === true
          ? { maxMib: undefined, room: undefined }
          : { maxMib: view.spec.upload.maxMib, room: view.spec.upload.room },
    auth: view.auth,
    access: view.access,
    handler: view.handler,
  };
}

/** The operations of the API: the URL table's rows (`src/urls.ts`), checked for duplicates. */
export class Api {
  readonly operations: Operation[] = [];

  constructor(rows: readonly Operation[] = []) {
    rows.forEach((row) => {
      this.add(row);
    });
  }

  /** Adds one row; a method and path given twice is a mistake in the table. */
  add(operation: Operation): void {
    if (this.operations.some((o) => o.method === operation.method && o.path === operation.path)) {
      throw new Error(`${operation.method} ${operation.path} is declared twice`);
    }
    this.operations.push(operation);
  }
}

/** A path template compiled for matching: `/drafts/{draft_id}`. */
export interface Route {
  template: string;
  pattern: RegExp;
  names: string[];
  byMethod: Map<string, Operation>;
}

/** Groups operations by path template, in declaration order. */
export function compileRoutes(operations: readonly Operation[]): Route[] {
  const routes = new Map<string, Route>();
  for (const operation of operations) {
    let route = routes.get(operation.path);
    if (route === undefined) {
      const names: string[] = [];
      const source = operation.path
        .split("/")
        .map((segment) => {
          const name = /^\{(\w+)\}$/.exec(segment)?.[1];
          if (name === undefined) return segment.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
          names.push(name);
          return isRestParam(name) ? "(.+)" : "([^/]+)";
        })
        .join("/");
      route = {
        template: operation.path,
        pattern: new RegExp(`^${source}/?$`),
        names,
        byMethod: new Map(),
      };
      routes.set(operation.path, route);
    }
    route.byMethod.set(operation.method, operation);
  }
  return [...routes.values()];
}

/** A text path segment, percent-decoded; undefined (an unknown path) when it does not decode or holds NUL. */
export function decodeSegment(segment: string): string | undefined {
  try {
    const text = decodeURIComponent(segment);
    return text.includes("\u0000") ? undefined : text;
  } catch {
    return undefined;
  }
}

/** The operation for a method and path, with its path parameters; 404 and 405 as the contract says. */
export function matchRoute(
  routes: readonly Route[],
  method: string,
  path: string,
): { operation: Operation; route: Route; pathParams: Record<string, number | string> } {
  for (const route of routes) {
    const match = route.pattern.exec(path);
    if (match === null) continue;
    const segments = match.slice(1);
    // A non-numeric id is an unknown path, as in Zulip's URL patterns.
    const pathParams: Record<string, number | string> = {};
    route.names.forEach((name, i) => {
      const segment = segments[i] ?? "";
      const value = isIdParam(name)
        ? isIntPath(segment)
          ? Number(segment)
          : undefined
        : decodeSegment(segment);
      if (value !== undefined) pathParams[name] = value;
    });
    if (Object.keys(pathParams).length !== route.names.length) continue;
    const operation = route.byMethod.get(method === "HEAD" ? "GET" : method);
    if (operation === undefined) {
      const allowed = [...route.byMethod.keys()];
      if (allowed.includes("GET")) allowed.push("HEAD");
      throw new MethodNotAllowedError(allowed);
    }
    return { operation, route, pathParams };
  }
  throw new PathNotFoundError();
}

/** Checks the operation's access rules for `user`, in Zulip's order. */
export function checkAccess(access: Access, user: AuthedUser): void {
  if (access.bots === false && user.is_bot)
    throw new JsonableError("This endpoint does not accept bot requests.");
  if (access.guests === false && isGuest(user.role))
    throw new JsonableError("Not allowed for guest users");
  if (access.role === "owner" && !isOwner(user.role)) throw new OrganizationOwnerRequiredError();
  if (access.role === "administrator" && !isAdministrator(user.role))
    throw new OrganizationAdministratorRequiredError();
}

/**
 * The field names a declaration reads (each parameter's name and aliases),
 * made once per declaration: the same for every request.
 */
const namesRead = new WeakMap<Record<string, Param<unknown, unknown>>, ReadonlySet<string>>();

function namesReadBy(declared: Record<string, Param<unknown, unknown>>): ReadonlySet<string> {
  let names = namesRead.get(declared);
  if (names === undefined) {
    names = new Set(Object.entries(declared).flatMap(([name, param]) => [name, ...param.aliases]));
    namesRead.set(declared, names);
  }
  return names;
}

/**
 * Reads every declared parameter from `fields` (body first, then query, as
 * merged by the caller): aliases, missing and confusing variables, the
 * parameter's own parser. Returns the values and every field name it read.
 */
export function readParams(
  declared: Record<string, Param<unknown, unknown>>,
  fields: ReadonlyMap<string, string>,
  maxJsonDepth = Number.POSITIVE_INFINITY,
): { values: Record<string, unknown>; read: ReadonlySet<string> } {
  const values: Record<string, unknown> = {};
  for (const name of Object.keys(declared)) {
    const param = declared[name];
    if (param === undefined) continue;
    // The first of the parameter's names present; a second one present is a confusing variable.
    let given = fields.has(name) ? name : undefined;
    for (const alias of param.aliases) {
      if (!fields.has(alias)) continue;
      if (given !== undefined) throw new RequestConfusingVarError(given, alias);
      given = alias;
    }
    if (given === undefined) {
      if (param.required) throw new RequestVariableMissingError(name);
      values[name] = param.fallback;
      continue;
    }
    const raw = fields.get(given) ?? "";
    // Refused before parsing, so that no nesting reaches a recursive parser.
    if (param.jsonEncoded && jsonDepth(raw) > maxJsonDepth)
      throw new JsonableError(`${given} is nested too deeply (limit: ${maxJsonDepth} levels)`);
    values[name] = param.parse(raw, given);
  }
  return { values, read: namesReadBy(declared) };
}
