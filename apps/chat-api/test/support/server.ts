import { mkdtemp, rm } from "node:fs/promises";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { Writable } from "node:stream";
import pino from "pino";
import { request } from "undici";
import { createAccount } from "../../src/actions/accounts";
import { type SystemGroupName, createRealm } from "../../src/actions/realm-creation";
import { Role } from "../../src/lib/roles";
import { loadConfig } from "../../src/lib/config";
import { eventsSchema } from "./zulip-schema";
import { eventProblems } from "./flutter-models";
import type { Api } from "../../src/http/typed-endpoint";
import { type RunningServer, startServer } from "../../src/server";
import type { Services } from "../../src/http/context";
import { createServices } from "../../src/services";
import { type TestDatabase, freshDatabase } from "./database";

/** The root host of test servers (CHAT_EXTERNAL_URL); realms are `<sub>.chat.test`. */
export const ROOT_HOST = "chat.test";

/** What a test call returns. */
export interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** The parsed JSON body (undefined for an empty body). */
  body: Record<string, unknown>;
  text: string;
}

/** Options of one call. */
export interface CallOptions {
  host?: string;
  /** `[email, apiKey]` for Basic auth, or a raw Authorization header. */
  auth?: readonly [string, string] | string;
  /** Form fields; non-strings are sent as JSON text, as Zulip clients do. */
  form?: Record<string, unknown>;
  query?: Record<string, unknown>;
  headers?: Record<string, string>;
  body?: string | Buffer;
}

/** A demo person's id, email and key. */
export interface Person {
  id: number;
  email: string;
  apiKey: string;
}

/** A started test server with its database and log. */
export interface TestServer {
  url: string;
  port: number;
  db: TestDatabase;
  services: Services;
  running: RunningServer;
  /** Every log line written so far, as text. */
  logs: string[];
  call(method: string, path: string, options?: CallOptions): Promise<Reply>;
  person(key: string): Promise<Person>;
  close(): Promise<void>;
}

const encode = (fields: Record<string, unknown> = {}): string =>
  new URLSearchParams(
    Object.entries(fields).map(([k, v]): [string, string] => [
      k,
      typeof v === "string" ? v : JSON.stringify(v),
    ]),
  ).toString();

/**
 * Starts chat-api on a loopback port over `db`, or over a database of its own
 * (with the demo realm, unless `seed` is false), with `env` on top of the test
 * defaults, and optionally another operation table.
 */
export async function startTestServer(
  options: {
    env?: Record<string, string>;
    api?: (services: Services) => Api;
    /** Without `db`: whether the database holds the demo realm (default true). */
    seed?: boolean;
    db?: TestDatabase;
  } = {},
): Promise<TestServer> {
  const db = options.db ?? (await freshDatabase(options.seed === false ? "migrated" : "seeded"));
  // Each server keeps its files (uploads) in a directory of its own, removed at close.
  const dataDir = await mkdtemp(path.join(tmpdir(), "chat-test-"));
  const config = loadConfig({
    CHAT_DATA_DIR: dataDir,
    CHAT_EXTERNAL_URL: `http://${ROOT_HOST}`,
    CHAT_LOG_LEVEL: "info",
    NODE_ENV: "development",
    ...options.env,
  });
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      logs.push(chunk.toString());
      done();
    },
  });
  const services = createServices(config, db, pino({ level: config.CHAT_LOG_LEVEL }, sink));
  const running = await startServer(services, {
    host: "127.0.0.1",
    port: 0,
    metricsPort: 0,
    ...(options.api === undefined ? {} : { api: options.api(services) }),
  });
  const { port } = running.server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;
  let closed = false;

  const call = async (method: string, path: string, opts: CallOptions = {}): Promise<Reply> => {
    const headers: Record<string, string> = { host: opts.host ?? ROOT_HOST, ...opts.headers };
    if (typeof opts.auth === "string") headers.authorization = opts.auth;
    else if (opts.auth !== undefined) {
      headers.authorization = `Basic ${Buffer.from(`${opts.auth[0]}:${opts.auth[1]}`).toString("base64")}`;
    }
    let body = opts.body;
    if (opts.form !== undefined) {
      body = encode(opts.form);
      headers["content-type"] ??= "application/x-www-form-urlencoded";
    }
    const query = opts.query === undefined ? "" : `?${encode(opts.query)}`;
    const response = await request(`${url}${path}${query}`, {
      method: method as "GET",
      headers,
      // A connection per call. The server runs in this process: a statement that
      // holds its event loop (PGlite's, over seconds under load) outlasts Node's
      // 5 s keep-alive, and the next call reused a connection the server was
      // closing: ECONNRESET, seen in hostile-session.test.ts's 5,001-message move.
      reset: true,
      ...(body === undefined ? {} : { body }),
    });
    const text = await response.body.text();
    return {
      status: response.statusCode,
      headers: response.headers,
      body: text === "" ? {} : (JSON.parse(text) as Record<string, unknown>),
      text,
    };
  };

  return {
    url,
    port,
    db,
    services,
    running,
    logs,
    call,
    async person(key) {
      const user = await db.prisma.user.findFirstOrThrow({
        where: { email: `${key}@example.com` },
      });
      return { id: user.id, email: user.email, apiKey: user.api_key };
    },
    async close() {
      if (closed) return;
      closed = true;
      await running.stop(1000);
      await rm(dataDir, { recursive: true, force: true });
      if (options.db === undefined) {
        // running.stop closed the database; drop a PostgreSQL test schema too.
        await db.close().catch(() => undefined);
      }
    },
  };
}

/** A second realm, "lear" (host lear.chat.test), with one person: edmund, an owner by default. */
export async function createOtherRealm(
  server: TestServer,
  role: number = Role.OWNER,
): Promise<{ realmId: number; groups: Record<SystemGroupName, number>; outsider: Person }> {
  return server.db.transaction(async (tx) => {
    const { realmId, groups } = await createRealm(tx, { subdomain: "lear", name: "Lear" });
    const email = "edmund@example.com";
    const { id, apiKey } = await createAccount(tx, { realmId, email, fullName: "Edmund", role });
    return { realmId, groups, outsider: { id, email, apiKey } };
  });
}

/** Demo people by key, loaded once: their ids and the auth option of a call made as them. */
export interface Cast {
  person(key: string): Person;
  id(key: string): number;
  as(key: string): { auth: readonly [string, string] };
}

/** Loads the demo people `keys` of `server` into a {@link Cast}. */
export async function loadCast(server: TestServer, keys: readonly string[]): Promise<Cast> {
  const people = new Map<string, Person>();
  for (const key of keys) people.set(key, await server.person(key));
  const person = (key: string): Person => {
    const found = people.get(key);
    if (found === undefined) throw new Error(`${key} is not in the cast`);
    return found;
  };
  return {
    person,
    id: (key) => person(key).id,
    as: (key) => authOf(person(key)),
  };
}

/** The channels of `server`'s database by name (the demo realm's, and any a test made). */
export async function channelIds(server: TestServer): Promise<Record<string, number>> {
  const rows = await server.db.prisma.channel.findMany({ select: { name: true, id: true } });
  return Object.fromEntries(rows.map((c) => [c.name, c.id]));
}

/** The auth option of a call made as `person`. */
export const authOf = (person: Person) => ({ auth: [person.email, person.apiKey] as const });

/** The error envelope the API answers with. */
export const apiError = (msg: string, code = "BAD_REQUEST") => ({ result: "error", msg, code });

/** Zulip's answer to a send to a channel that does not exist (or that the sender may not see). */
export const channelMissing = (to: number | string) => ({
  ...apiError(
    typeof to === "number"
      ? `Channel with ID '${String(to)}' does not exist`
      : `Channel '${to}' does not exist`,
    "STREAM_DOES_NOT_EXIST",
  ),
  ...(typeof to === "number" ? { stream_id: to } : { stream: to }),
});

const validateEvents = eventsSchema();

/** An event as a poll answers it. */
export type PolledEvent = Record<string, unknown> & { id: number; type: string };

/**
 * Registers a queue of the caller of `auth` for event `types` (with the
 * `register` fields in `form`) and answers a function that polls it without
 * blocking, acknowledging what it read: each call answers the events since
 * the last one, without their ids. Every event must be one Zulip describes
 * (`eventsSchema`) and one the mobile app parses (`eventProblems`).
 */
export async function listenAs(
  server: TestServer,
  auth: { auth: readonly [string, string] },
  types: readonly string[],
  form: Record<string, string> = {},
): Promise<() => Promise<Record<string, unknown>[]>> {
  const reply = await server.call("POST", "/api/v1/register", {
    ...auth,
    form: { event_types: JSON.stringify(types), ...form },
  });
  if (reply.status !== 200) throw new Error(`register failed: ${reply.text}`);
  const capabilities = JSON.parse(form.client_capabilities ?? "{}") as Record<string, unknown>;
  const bulk = capabilities.bulk_message_deletion === true;
  let last = -1;
  return async () => {
    const polled = await server.call("GET", "/api/v1/events", {
      ...auth,
      query: {
        queue_id: String(reply.body.queue_id),
        last_event_id: String(last),
        dont_block: "true",
      },
    });
    const problems = validateEvents(polled.body);
    if (problems.length > 0) throw new Error(`undescribed events: ${problems.join("; ")}`);
    const unparsed = eventProblems(polled.body, bulk);
    if (unparsed.length > 0)
      throw new Error(`events the mobile app cannot parse: ${unparsed.join("; ")}`);
    const events = polled.body.events as PolledEvent[];
    last = events.at(-1)?.id ?? last;
    return events.map(({ id: _id, ...event }) => event);
  };
}
