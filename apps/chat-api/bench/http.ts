/**
 * chat-api under load on PostgreSQL, against two references measured in the
 * same run (bench/references.ts): bare Express with the same body parser
 * answering a fixed envelope (the framework's ceiling), and each operation
 * written directly with `pg`, sending the same statements (the cost of our
 * layers). Loads come from autocannon in another process over loopback. Then
 * POST /mark_all_as_read on 100,000 unread messages, and the number of API-key
 * lookups PostgreSQL saw during the authenticated loads. Writes its section of
 * docs/benchmarks.md.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { execFileSync } from "node:child_process";
import { isDeepStrictEqual } from "node:util";
import { join } from "node:path";
import {
  type HttpLoadResult,
  type Served,
  autocannon,
  autocannonVersion,
  freePort,
  machine,
  serve,
  summarize,
  table,
  writeSection,
} from "@repo/bench-kit";
import { Client } from "pg";
import {
  CHAIN_DEPTH,
  MESSAGES,
  PRESENT_USERS,
  USERS,
  createDataset,
  markAllUnread,
} from "./dataset";
import type { Dataset } from "./dataset";
import { NODE_FLAGS, PROCESS_ENV, START_COMMAND } from "../src/node-flags";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 4);
const MARK_ROUNDS = Math.min(ROUNDS, 3);
const CONNECTIONS = 10;
const ADMIN_URL = process.env.BENCH_DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";
const DOCS = join(__dirname, "../../../docs/benchmarks.md");
const TS = ["--conditions=@repo/source", "--require", "@swc-node/register"];
/** BENCH_CASES=text,...: only the operations whose names contain one of them; the report is not written. */
const ONLY = process.env.BENCH_CASES?.split(",").filter((t) => t !== "");
/** BENCH_CPU_PROF=DIR: chat-api writes a V8 CPU profile there when it stops. */
const CPU_PROF = process.env.BENCH_CPU_PROF;
const EXTERNAL_URL = "http://localhost:9991";

type Target = "ours" | "pg" | "ceiling";
const TARGETS: readonly Target[] = ["ours", "pg", "ceiling"];

interface Case {
  name: string;
  method: "GET" | "PATCH";
  path: string;
  auth: boolean;
  body?: string;
}

function cases(data: Dataset): Case[] {
  return allCases(data).filter(
    (c) => ONLY === undefined || ONLY.some((text) => c.name.includes(text)),
  );
}

function allCases(data: Dataset): Case[] {
  const draft = JSON.stringify({
    type: "stream",
    to: [data.channelId],
    topic: "plans",
    content: "an edited draft",
    timestamp: 1_795_000_000,
  });
  return [
    { name: "GET /server_settings", method: "GET", path: "/server_settings", auth: false },
    {
      name: `GET /user_groups/{id}/members/{user_id} (${CHAIN_DEPTH}-level chain)`,
      method: "GET",
      path: `/user_groups/${data.chainTop}/members/${data.chainMember}`,
      auth: true,
    },
    {
      name: `GET /realm/presence (${PRESENT_USERS} present)`,
      method: "GET",
      path: "/realm/presence",
      auth: true,
    },
    {
      name: "PATCH /drafts/{id}",
      method: "PATCH",
      path: `/drafts/${data.draftId}`,
      auth: true,
      body: `draft=${encodeURIComponent(draft)}`,
    },
  ];
}

function headers(data: Dataset, withBody: boolean): Record<string, string> {
  const basic = Buffer.from(`${data.caller.email}:${data.caller.apiKey}`).toString("base64");
  return {
    authorization: `Basic ${basic}`,
    ...(withBody ? { "content-type": "application/x-www-form-urlencoded" } : {}),
  };
}

async function call(
  port: number,
  data: Dataset,
  method: string,
  path: string,
  body?: string,
): Promise<{ status: number; json: Record<string, unknown> }> {
  const response = await fetch(`http://127.0.0.1:${port}/api/v1${path}`, {
    method,
    headers: headers(data, body !== undefined),
    ...(body === undefined ? {} : { body }),
  });
  return { status: response.status, json: (await response.json()) as Record<string, unknown> };
}

/** Before any load: the pg reference answers each case as chat-api does (or the comparison is void). */
async function sameAnswers(servers: Record<Target, Served>, data: Dataset): Promise<void> {
  for (const c of cases(data)) {
    const [ours, pg] = await Promise.all(
      (["ours", "pg"] as const).map((t) => call(servers[t].port, data, c.method, c.path, c.body)),
    );
    if (ours === undefined || pg === undefined) throw new Error("no answer");
    delete ours.json.server_timestamp;
    delete pg.json.server_timestamp;
    if (ours.status !== 200 || !isDeepStrictEqual(ours.json, pg.json)) {
      throw new Error(
        `${c.name}: the references answer differently:\nours ${ours.status} ${JSON.stringify(ours.json).slice(0, 500)}\npg   ${pg.status} ${JSON.stringify(pg.json).slice(0, 500)}`,
      );
    }
  }
}

/** Index scans on users.api_key so far (PostgreSQL's statistics; exact once the server's connections have closed). */
async function apiKeyLookups(url: string): Promise<number> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ scans: string }>(
      "SELECT idx_scan AS scans FROM pg_stat_user_indexes WHERE indexrelname = 'users_api_key_key'",
    );
    return Number(rows[0]?.scans ?? 0);
  } finally {
    await client.end();
  }
}

async function unread(data: Dataset): Promise<number> {
  const client = new Client({ connectionString: data.url });
  await client.connect();
  try {
    const { rows } = await client.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM user_messages WHERE user_id = $1 AND (flags & 1) = 0",
      [data.caller.id],
    );
    return rows[0]?.n ?? -1;
  } finally {
    await client.end();
  }
}

const fmt = (n: number, digits = 0): string =>
  n.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });
const pct = (n: number): string => `${(n * 100).toFixed(1)} %`;

/** Starts PostgreSQL's default cluster when nothing answers at ADMIN_URL (the machines' layout). */
async function ensurePostgres(): Promise<void> {
  const client = new Client({ connectionString: ADMIN_URL });
  try {
    await client.connect();
    await client.end();
    return;
  } catch {
    if (process.env.BENCH_DATABASE_URL !== undefined)
      throw new Error(`PostgreSQL does not answer at ${ADMIN_URL}`);
  }
  process.stderr.write(
    "PostgreSQL does not answer on 127.0.0.1:5432: starting the local cluster\n",
  );
  const version = execFileSync("ls", ["/etc/postgresql"], { encoding: "utf8" })
    .split("\n")
    .filter((v) => v !== "")
    .sort((a, b) => Number(a) - Number(b))
    .at(-1);
  if (version === undefined) throw new Error("no PostgreSQL cluster in /etc/postgresql");
  execFileSync("pg_ctlcluster", ["--skip-systemctl-redirect", version, "main", "start"]);
}

async function main(): Promise<void> {
  const startedAt = new Date().toISOString();
  await ensurePostgres();
  process.stdout.write(`filling a database with ${USERS} users and ${MESSAGES} messages...\n`);
  const data = await createDataset(ADMIN_URL);
  const servers: Partial<Record<Target, Served>> = {};
  try {
    const [ours, pg, ceiling] = await Promise.all([freePort(), freePort(), freePort()]);
    const profile = CPU_PROF === undefined ? [] : ["--cpu-prof", `--cpu-prof-dir=${CPU_PROF}`];
    servers.ours = await serve(
      "node",
      [...NODE_FLAGS, ...profile, join(__dirname, "../dist/index.js")],
      ours,
      {
        ...PROCESS_ENV,
        DATABASE_URL: data.url,
        NODE_ENV: "production",
        PORT: String(ours),
        CHAT_HOST: "127.0.0.1",
        CHAT_METRICS_PORT: String(await freePort()),
        CHAT_EXTERNAL_URL: EXTERNAL_URL,
        // The benchmark is one user making thousands of calls a second.
        CHAT_RATE_LIMIT: "false",
      },
    );
    const reference = (kind: string, port: number) =>
      serve("node", [...TS, join(__dirname, "references.ts")], port, {
        BENCH_REFERENCE: kind,
        PORT: String(port),
        DATABASE_URL: data.url,
        BENCH_CALLER: String(data.caller.id),
        CHAT_EXTERNAL_URL: EXTERNAL_URL,
      });
    servers.pg = await reference("pg", pg);
    servers.ceiling = await reference("ceiling", ceiling);
    const all = servers as Record<Target, Served>;

    // A client with an event queue, so writes also write their events (as with a real client).
    const registered = await call(
      ours,
      data,
      "POST",
      "/register",
      "event_types=%5B%22drafts%22%2C%22update_message_flags%22%5D",
    );
    if (registered.status !== 200) throw new Error(`POST /register: ${registered.status}`);
    await sameAnswers(all, data);
    const lookupsBefore = await apiKeyLookups(data.url);

    const results = new Map<string, Record<Target, HttpLoadResult[]>>();
    let authedRequests = 0;
    for (const c of cases(data)) {
      const runs: Record<Target, HttpLoadResult[]> = { ours: [], pg: [], ceiling: [] };
      for (let round = 0; round < ROUNDS; round += 1) {
        for (const target of TARGETS) {
          const options = {
            url: `http://127.0.0.1:${all[target].port}/api/v1${c.path}`,
            method: c.method,
            headers: headers(data, c.body !== undefined),
            ...(c.body === undefined ? {} : { body: c.body }),
            connections: CONNECTIONS,
          };
          const warm = await autocannon({ ...options, seconds: 1 });
          const run = await autocannon({ ...options, seconds: SECONDS });
          if (warm.failures + run.failures > 0)
            throw new Error(
              `${c.name} on ${target}: ${warm.failures + run.failures} failed requests`,
            );
          if (target === "ours" && c.auth) authedRequests += warm.requests + run.requests;
          runs[target].push(run);
          process.stdout.write(
            `${c.name} ${target} round ${round + 1}: ${fmt(run.requestsPerSecond)} req/s, p99 ${run.p99Ms} ms\n`,
          );
        }
      }
      results.set(c.name, runs);
    }

    // mark_all_as_read on 100,000 unread messages, each server in turn.
    const marks: Record<"ours" | "pg", number[]> = { ours: [], pg: [] };
    for (let round = 0; round < (ONLY === undefined ? MARK_ROUNDS : 0); round += 1) {
      for (const target of ["ours", "pg"] as const) {
        await markAllUnread(data);
        const before = await unread(data);
        const started = performance.now();
        const answer = await call(all[target].port, data, "POST", "/mark_all_as_read", "");
        const seconds = (performance.now() - started) / 1000;
        const after = await unread(data);
        if (
          answer.status !== 200 ||
          answer.json.complete !== true ||
          before < MESSAGES ||
          after !== 0
        )
          throw new Error(
            `mark_all_as_read on ${target}: ${JSON.stringify(answer)}, unread ${before} -> ${after}`,
          );
        marks[target].push(seconds);
        process.stdout.write(
          `mark_all_as_read ${target} round ${round + 1}: ${seconds.toFixed(2)} s\n`,
        );
      }
    }

    // The server's connections flush their statistics when they close.
    await all.ours.stop();
    await sleep(1000);
    const lookups = (await apiKeyLookups(data.url)) - lookupsBefore;

    const rows = [...results].map(([name, runs]) => {
      const median = (t: Target) => summarize(runs[t].map((r) => r.requestsPerSecond));
      const p99 = (t: Target) => summarize(runs[t].map((r) => r.p99Ms)).median;
      const ours = median("ours");
      return [
        name,
        fmt(ours.median),
        pct(ours.spread),
        fmt(p99("ours")),
        fmt(median("pg").median),
        fmt(p99("pg")),
        fmt(median("ceiling").median),
        `**${(ours.median / median("pg").median).toFixed(2)}x**`,
        `${(ours.median / median("ceiling").median).toFixed(2)}x`,
      ];
    });
    const markOurs = summarize(marks.ours);
    const markPg = summarize(marks.pg);
    const report = [
      "## chat-api: operations on PostgreSQL",
      "",
      `Run ${startedAt} with \`pnpm bench\` (\`pnpm --filter chat-api bench\` for this part alone) on ${machine([`autocannon ${autocannonVersion()}`, await postgresVersion()])}.`,
      `Data: the demo realm enlarged to ${fmt(USERS)} users and ${fmt(MESSAGES)} messages (bench/dataset.ts). Each operation: ${ROUNDS} rounds of ${SECONDS} s (after 1 s of warm-up) per server, servers taking turns; autocannon with ${CONNECTIONS} connections, HTTP/1.1 keep-alive, no pipelining; chat-api as deployed (\`${START_COMMAND}\`, production mode, info logs, pool of 10) with the rate limit off. Latencies are whole milliseconds (autocannon's resolution). Spread = (max - min) / median of the rounds' requests/s.`,
      "",
      table(
        [
          "operation",
          "ours req/s",
          "spread",
          "p99 ms",
          "raw pg req/s",
          "raw pg p99 ms",
          "bare Express req/s",
          "ours / raw pg",
          "ours / bare Express",
        ],
        rows,
      ),
      "",
      table(
        ["POST /mark_all_as_read, 100,000 unread", "ours", "raw pg", "ours / raw pg (time)"],
        [
          [
            `median of ${MARK_ROUNDS} (min - max)`,
            `${markOurs.median.toFixed(2)} s (${markOurs.min.toFixed(2)} - ${markOurs.max.toFixed(2)})`,
            `${markPg.median.toFixed(2)} s (${markPg.min.toFixed(2)} - ${markPg.max.toFixed(2)})`,
            `${(markOurs.median / markPg.median).toFixed(2)}x`,
          ],
        ],
      ),
      "",
      `Authentication: PostgreSQL counted ${fmt(lookups)} index lookups of API keys (\`users_api_key_key\`) during ${fmt(authedRequests)} authenticated requests to chat-api (the first of the caller's, and one each time the cache's one-minute lifetime ran out).`,
    ].join("\n");
    process.stdout.write(`\n${report}\n`);
    if (ONLY === undefined) writeSection(DOCS, "chat-api", report);
  } finally {
    await Promise.all(Object.values(servers).map((s) => s.stop()));
    await data.drop();
  }
}

async function postgresVersion(): Promise<string> {
  const client = new Client({ connectionString: ADMIN_URL });
  await client.connect();
  try {
    const { rows } = await client.query<{ server_version: string }>("SHOW server_version");
    return `PostgreSQL ${rows[0]?.server_version ?? "?"}`;
  } finally {
    await client.end();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? String(error.stack) : String(error)}\n`);
  process.exit(1);
});
