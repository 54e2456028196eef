/**
 * What the real-time benchmarks share: a database with users and channels
 * for a load, chat-api replicas started on it, and one HTTP call as a Zulip
 * client makes it (Basic authentication, form bodies) over loopback.
 */
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import {
  JIFFIES,
  type Served,
  freePort,
  processSeconds,
  processStat,
  serve,
} from "@repo/bench-kit";
import { Client } from "pg";
import { Agent, type Dispatcher, errors } from "undici";
import { createSeededDatabase, insertChannels } from "./dataset";
import { NODE_FLAGS, PROCESS_ENV } from "../src/node-flags";

export const ADMIN_URL =
  process.env.BENCH_DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";
const EXTERNAL_URL = "http://localhost:9991";

/**
 * Milliseconds since the Unix epoch, with sub-millisecond precision: the one
 * clock of the load's threads (each thread's `performance.now()` counts from
 * its own start).
 */
export const now = (): number => performance.timeOrigin + performance.now();

/** A user of the load. */
export interface User {
  id: number;
  email: string;
  apiKey: string;
}

/** A database of its own for a load. */
export interface LoadRealm {
  url: string;
  users: User[];
  /** The load's channels, in creation order. */
  channels: number[];
  /** The channels of each user (indexes into `channels`), by user index. */
  subscriptions: number[][];
  drop(): Promise<void>;
}

/**
 * Creates a database with the demo realm (seeded by the service), `users`
 * more users (full members) and `channels` channels named `load-N`; user i
 * is subscribed to the channels `subscribe(i)` names (indexes).
 */
export async function createLoadRealm(
  prefix: string,
  users: number,
  channels: number,
  subscribe: (user: number) => number[],
): Promise<LoadRealm> {
  const { url, drop } = await createSeededDatabase(ADMIN_URL, prefix);
  const db = new Client({ connectionString: url });
  await db.connect();
  try {
    return { url, ...(await addLoadUsers(db, users, channels, subscribe)), drop };
  } finally {
    await db.end();
  }
}

/**
 * Adds to the demo realm of the database `db` is connected to `users` users
 * (full members, `rtN@example.com`) and `channels` channels named `load-N`;
 * user i is subscribed to the channels `subscribe(i)` names (indexes).
 */
export async function addLoadUsers(
  db: Client,
  users: number,
  channels: number,
  subscribe: (user: number) => number[],
): Promise<Omit<LoadRealm, "url" | "drop">> {
  const q = async <T extends Record<string, unknown>>(text: string, params: unknown[] = []) =>
    (await db.query<T>(text, params)).rows;
  const [realm] = await q<{ realm_id: number; group: number }>(
    `SELECT u.realm_id, g.id AS group FROM users u
     JOIN user_groups g ON g.realm_id = u.realm_id AND g.name = 'role:fullmembers'
     WHERE u.email = 'hamlet@example.com'`,
  );
  if (realm === undefined) throw new Error("the demo realm changed");
  const rows = await q<{ id: number; email: string; api_key: string }>(
    `INSERT INTO users (realm_id, email, delivery_email, full_name, api_key)
     SELECT $1, 'rt' || n || '@example.com', 'rt' || n || '@example.com', 'Listener ' || n,
            substr(md5('realtime-key-' || n), 1, 32)
     FROM generate_series(1, $2::int) AS n ORDER BY n
     RETURNING id, email, api_key`,
    [realm.realm_id, users],
  );
  await q("INSERT INTO user_group_members (group_id, user_id) SELECT $1, unnest($2::int[])", [
    realm.group,
    rows.map((u) => u.id),
  ]);
  const created = await insertChannels(db, realm.realm_id, "load", channels);
  const subscriptions = rows.map((_, i) => [...new Set(subscribe(i))]);
  const pairs = subscriptions.flatMap((list, i) =>
    list.map((c) => [rows[i]?.id ?? 0, created[c] ?? 0] as const),
  );
  await q(
    `INSERT INTO subscriptions (user_id, channel_id, color)
     SELECT unnest($1::int[]), unnest($2::int[]), '#76ce90'`,
    [pairs.map((p) => p[0]), pairs.map((p) => p[1])],
  );
  await q("ANALYZE");
  return {
    users: rows.map((u) => ({ id: u.id, email: u.email, apiKey: u.api_key })),
    channels: created,
    subscriptions,
  };
}

/** BENCH_CPU_PROF=DIR: each chat-api process writes a V8 CPU profile there when it stops. */
const CPU_PROF = process.env.BENCH_CPU_PROF;

/**
 * Starts `replicas` chat-api processes as deployed (production, its Node
 * flags), with the rate limit off, on the database `url`, with `env` added
 * and `nodeArgs` after the Node flags; `build` is the directory of the
 * build they run (this checkout's `dist` unless another is named).
 */
export async function startReplicas(
  url: string,
  replicas: number,
  env: Record<string, string> = {},
  nodeArgs: readonly string[] = [],
  build: string = join(__dirname, "../dist"),
): Promise<Served[]> {
  const servers: Served[] = [];
  for (let r = 0; r < replicas; r++) {
    const port = await freePort();
    const profile = CPU_PROF === undefined ? [] : ["--cpu-prof", `--cpu-prof-dir=${CPU_PROF}`];
    servers.push(
      await serve("node", [...NODE_FLAGS, ...profile, ...nodeArgs, join(build, "index.js")], port, {
        ...PROCESS_ENV,
        DATABASE_URL: url,
        NODE_ENV: "production",
        PORT: String(port),
        CHAT_HOST: "127.0.0.1",
        CHAT_METRICS_PORT: String(await freePort()),
        CHAT_EXTERNAL_URL: EXTERNAL_URL,
        CHAT_RATE_LIMIT: "false",
        CHAT_MAX_POLLS_PER_USER: "100",
        ...env,
      }),
    );
  }
  return servers;
}

/** Where the machine's CPU went, in seconds so far: see {@link cpuSnapshot}. */
export interface CpuSnapshot {
  /** The server processes named. */
  servers: number;
  /** Every PostgreSQL process (the server and its backends). */
  postgres: number;
  /** This process, all its threads (the load). */
  load: number;
  /** All CPUs, busy (not idle or waiting for I/O). */
  busy: number;
  /** All CPUs, in all. */
  total: number;
}

/**
 * The CPU used so far by `serverPids`, by PostgreSQL's processes, by this
 * process, and by the whole machine (/proc/stat's first line: user, nice,
 * system, idle, iowait, irq, softirq, steal). Two snapshots' difference is
 * where a run's CPU went; a PostgreSQL backend that exits between them takes
 * its share along (the replicas' pools keep theirs open through a run).
 */
export function cpuSnapshot(serverPids: readonly (number | undefined)[]): CpuSnapshot {
  let postgres = 0;
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = processStat(entry);
    if (stat?.name === "postgres") postgres += stat.seconds;
  }
  const [, ...times] = (readFileSync("/proc/stat", "utf8").split("\n")[0] ?? "")
    .trim()
    .split(/\s+/)
    .map(Number);
  const total = times.slice(0, 8).reduce((sum, t) => sum + t, 0) / JIFFIES;
  const idle = ((times[3] ?? 0) + (times[4] ?? 0)) / JIFFIES;
  const usage = process.cpuUsage();
  return {
    servers: serverPids.reduce((sum: number, pid) => sum + processSeconds(pid), 0),
    postgres,
    load: (usage.user + usage.system) / 1e6,
    busy: total - idle,
    total,
  };
}

/** The CPU used between snapshots `before` and `after`. */
export function cpuSpent(before: CpuSnapshot, after: CpuSnapshot): CpuSnapshot {
  return {
    servers: after.servers - before.servers,
    postgres: after.postgres - before.postgres,
    load: after.load - before.load,
    busy: after.busy - before.busy,
    total: after.total - before.total,
  };
}

/** What a request that got no answer (a connection error, a time-out) counts as. */
export const NO_ANSWER: { status: number; json: Record<string, unknown> } = {
  status: 0,
  json: {},
};

/** The connections of the load (keep-alive, one request at a time each). */
export const agent = new Agent({ connections: 8192, pipelining: 1, keepAliveTimeout: 120_000 });

/** Whether `error` is a time-out of {@link call}. */
export function timedOut(error: unknown): boolean {
  return (
    error instanceof errors.HeadersTimeoutError ||
    error instanceof errors.BodyTimeoutError ||
    (typeof error === "object" &&
      error !== null &&
      "name" in error &&
      error.name === "TimeoutError")
  );
}

/** Each user's Basic `authorization` header, made once. */
const authorizations = new WeakMap<User, string>();

export function authorization(user: User): string {
  let header = authorizations.get(user);
  if (header === undefined) {
    header = `Basic ${Buffer.from(`${user.email}:${user.apiKey}`).toString("base64")}`;
    authorizations.set(user, header);
  }
  return header;
}

/**
 * `method /api/v1<path>` on chat-api at `port` as `user`, `form` as the
 * query (GET) or the body (POST); rejects on a connection error or after
 * `timeoutMs`. Sent through `dispatcher`: the shared {@link agent}, or a
 * connection of the caller's own (a long-poll's, so that other requests do
 * not look through the busy long-polls for a free connection).
 */
export async function call(
  port: number,
  user: User,
  method: "GET" | "POST",
  path: string,
  form: Record<string, string>,
  timeoutMs?: number,
  dispatcher: Dispatcher = agent,
): Promise<{ status: number; json: Record<string, unknown> }> {
  const body = new URLSearchParams(form).toString();
  const response = await dispatcher.request({
    origin: `http://127.0.0.1:${String(port)}`,
    path: `/api/v1${path}${method === "GET" ? `?${body}` : ""}`,
    method,
    headers: {
      host: "localhost",
      authorization: authorization(user),
      ...(method === "POST" ? { "content-type": "application/x-www-form-urlencoded" } : {}),
    },
    ...(method === "POST" ? { body } : {}),
    ...(timeoutMs === undefined ? {} : { signal: AbortSignal.timeout(timeoutMs) }),
  });
  return {
    status: response.statusCode,
    json: (await response.body.json()) as Record<string, unknown>,
  };
}

/**
 * Registers an event queue for messages (`event_types=["message"]`) for each
 * of `users` on the server at `port`, `batch` at a time; answers the queue
 * ids in the users' order.
 */
export async function registerMessageQueues(
  port: number,
  users: readonly User[],
  batch = 50,
): Promise<string[]> {
  const queues: string[] = [];
  for (let from = 0; from < users.length; from += batch)
    queues.push(
      ...(await Promise.all(
        users.slice(from, from + batch).map(async (user) => {
          const reply = await call(port, user, "POST", "/register", {
            event_types: '["message"]',
          });
          if (reply.status !== 200) throw new Error(`register: HTTP ${String(reply.status)}`);
          return String(reply.json.queue_id);
        }),
      )),
    );
  return queues;
}
