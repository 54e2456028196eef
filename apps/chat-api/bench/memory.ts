/**
 * What chat-api keeps in memory (issue 53): an idle server just started, on
 * PostgreSQL and on the embedded database, and what each connected client
 * adds (an event queue and its held long-poll) at 1,000 and 10,000 clients.
 * Each figure is read right after a full garbage collection (through the
 * inspector), so it is what the process keeps, not garbage it has not yet
 * collected. Writes the `chat-memory` section of docs/benchmarks.md.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  type MemoryUsage,
  freePort,
  machine,
  memoryAfterGc,
  serve,
  summarize,
  table,
  writeSection,
} from "@repo/bench-kit";
import { Agent } from "undici";
import { createSeededDatabase } from "./dataset";
import {
  ADMIN_URL,
  NO_ANSWER,
  type User,
  call,
  createLoadRealm,
  registerMessageQueues,
  startReplicas,
} from "./load-realm";
import { NODE_FLAGS, PROCESS_ENV } from "../src/node-flags";

const DOCS = join(__dirname, "../../../docs/benchmarks.md");

/** BENCH_MEMORY_CLIENTS=1000,5000: the connected clients to measure at (the report is not written). */
const CHOSEN = process.env.BENCH_MEMORY_CLIENTS?.split(",").map(Number);
const CLIENT_STEPS = CHOSEN ?? [1000, 10_000];

/**
 * Servers measured at the first step in all (the first goes on to the next
 * steps): a server's resident memory at 1,000 clients moved by 4-5 MB
 * between runs, so the figure per client is the median of these.
 */
const FIRST_STEP_SERVERS = 3;

/** Clients registered and polled before the baseline, so that their code is compiled. */
const WARM_UP_CLIENTS = 20;
/** How long an idle server is left alone before it is measured. */
const IDLE_MS = 5000;

/** Zulip's documented minimum (its requirements.md): the whole server, its database and queues included. */
const ZULIP_MINIMUM =
  "Zulip's documented minimum: 2 GB for the whole server, 4 GB for 25 daily users";

const MiB = 2 ** 20;
const mib = (bytes: number): string => `${(bytes / MiB).toFixed(0)} MB`;
const kib = (bytes: number): string => `${(bytes / 1024).toFixed(1)} KB`;

interface Idle {
  label: string;
  memory: MemoryUsage;
}

/** chat-api on PostgreSQL (production start, the demo realm), idle. */
async function idleOnPostgres(): Promise<Idle> {
  const { url, drop } = await createSeededDatabase(ADMIN_URL, "bench_memory_idle");
  const inspect = await freePort();
  const [server] = await startReplicas(url, 1, { CHAT_LOG_LEVEL: "warn" }, [
    `--inspect=127.0.0.1:${String(inspect)}`,
  ]);
  try {
    await sleep(IDLE_MS);
    return { label: "idle, PostgreSQL", memory: await memoryAfterGc(inspect) };
  } finally {
    await server?.stop();
    await drop();
  }
}

/**
 * chat-api on the embedded database as `pnpm start` runs it (development: it
 * makes the data directory, migrates and seeds the demo realm), idle after its
 * first start and after a second one on the same directory.
 */
async function idleEmbedded(): Promise<Idle[]> {
  const dataDir = await mkdtemp(join(tmpdir(), "bench-memory-"));
  const measured: Idle[] = [];
  try {
    for (const start of ["first start (makes and seeds the database)", "a later start"]) {
      const port = await freePort();
      const inspect = await freePort();
      const server = await serve(
        "node",
        [
          ...NODE_FLAGS,
          `--inspect=127.0.0.1:${String(inspect)}`,
          join(__dirname, "../dist/index.js"),
        ],
        port,
        {
          ...PROCESS_ENV,
          CHAT_DATA_DIR: dataDir,
          NODE_ENV: "development",
          PORT: String(port),
          CHAT_HOST: "127.0.0.1",
          CHAT_METRICS_PORT: String(await freePort()),
          CHAT_LOG_LEVEL: "warn",
        },
      );
      try {
        await sleep(IDLE_MS);
        measured.push({ label: `idle, embedded, ${start}`, memory: await memoryAfterGc(inspect) });
      } finally {
        await server.stop();
      }
    }
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
  return measured;
}

interface ClientStep {
  clients: number;
  memory: MemoryUsage;
  /** Long-polls that ended in an error (not a heartbeat) while the clients were held. */
  errors: number;
}

interface ClientOutcome {
  baseline: MemoryUsage;
  steps: ClientStep[];
}

/**
 * Connected clients on PostgreSQL: each of N people registers one queue
 * (`event_types=["message"]`) and holds a long-poll on it (polling again after
 * each heartbeat), as an idle Zulip client does. The memory is read once the
 * server has had the polls for a while, at each step; the baseline after a
 * few clients came and went.
 */
async function connectedClients(clientSteps: readonly number[]): Promise<ClientOutcome> {
  const most = Math.max(...clientSteps);
  const realm = await createLoadRealm("bench_memory_clients", most + WARM_UP_CLIENTS, 1, () => [0]);
  const inspect = await freePort();
  const [server] = await startReplicas(realm.url, 1, { CHAT_LOG_LEVEL: "warn" }, [
    `--inspect=127.0.0.1:${String(inspect)}`,
  ]);
  if (server === undefined) throw new Error("no server");
  const { port } = server;
  const polls = new Agent({
    connections: most + 100,
    pipelining: 1,
    keepAliveTimeout: 120_000,
    headersTimeout: 0,
    bodyTimeout: 0,
  });
  const state = { stopping: false, errors: 0 };
  // Read through a function: the polls' awaits let `finally` set it.
  const stopping = (): boolean => state.stopping;
  const held: Promise<void>[] = [];
  const hold = async (user: User, queue: string): Promise<void> => {
    while (!state.stopping) {
      const reply = await call(
        port,
        user,
        "GET",
        "/events",
        { queue_id: queue, last_event_id: "-1" },
        undefined,
        polls,
      ).catch(() => NO_ANSWER);
      if (!stopping() && reply.status !== 200) {
        state.errors += 1;
        await sleep(1000);
      }
    }
  };
  try {
    // Warm-up: a few clients register, poll once, and their queues stay.
    const warmUp = realm.users.slice(most, most + WARM_UP_CLIENTS);
    for (const [i, queue] of (await registerMessageQueues(port, warmUp)).entries())
      await call(
        port,
        warmUp[i] ?? realm.users[0] ?? { id: 0, email: "", apiKey: "" },
        "GET",
        "/events",
        {
          queue_id: queue,
          last_event_id: "-1",
          dont_block: "true",
        },
      );
    await sleep(IDLE_MS);
    const baseline = await memoryAfterGc(inspect);
    const steps: ClientStep[] = [];
    let connected = 0;
    for (const clients of [...clientSteps].sort((a, b) => a - b)) {
      const joining = realm.users.slice(connected, clients);
      // Registered 50 at a time, then each holding its long-poll.
      for (const [i, queue] of (await registerMessageQueues(port, joining)).entries()) {
        const user = joining[i];
        if (user !== undefined) held.push(hold(user, queue));
      }
      connected = clients;
      await sleep(IDLE_MS + clients / 2);
      steps.push({ clients, memory: await memoryAfterGc(inspect), errors: state.errors });
    }
    return { baseline, steps };
  } finally {
    state.stopping = true;
    await server.stop();
    await polls.destroy();
    await Promise.all(held);
    await realm.drop();
  }
}

async function main(): Promise<void> {
  const idle = [await idleOnPostgres(), ...(await idleEmbedded())];
  const clients = await connectedClients(CLIENT_STEPS);
  // The first step again on fresh servers (only when the report is written).
  const again: ClientOutcome[] = [];
  const first = Math.min(...CLIENT_STEPS);
  for (let n = 1; CHOSEN === undefined && n < FIRST_STEP_SERVERS; n++)
    again.push(await connectedClients([first]));
  const perClient = (step: ClientStep, key: "rss" | "heapUsed") =>
    kib((step.memory[key] - clients.baseline[key]) / step.clients);
  const firstSteps = [clients, ...again].map((outcome) => {
    const step = outcome.steps[0];
    if (step === undefined) throw new Error("no step measured");
    return (step.memory.rss - outcome.baseline.rss) / step.clients;
  });
  const firstMedian = summarize(firstSteps).median;
  // The growth from the row before, per client added: free of the baseline's
  // own resident memory, which moves by several MB between runs.
  const perAdded = (step: ClientStep, before: ClientStep | undefined) =>
    before === undefined
      ? "-"
      : kib((step.memory.rss - before.memory.rss) / (step.clients - before.clients));
  const markdown = [
    "## chat-api: memory (issue 53)",
    "",
    `Every figure is read right after a full garbage collection (through the inspector, \`--inspect\` on loopback), ${String(IDLE_MS / 1000)} s after the server started or the last client connected. Resident: the process's resident set (Node's own code and data are about 40 MB of it); heap: V8's heap in use. PostgreSQL's own processes are not counted. ${ZULIP_MINIMUM} (its database, queues and caches included). ${machine([])}.`,
    "",
    table(
      ["chat-api", "resident", "heap in use", "outside V8's heap (WebAssembly, buffers)"],
      idle.map(({ label, memory }) => [
        label,
        `**${mib(memory.rss)}**`,
        mib(memory.heapUsed),
        mib(memory.external),
      ]),
    ),
    "",
    `Connected clients (PostgreSQL, production start): each of N people registers one event queue (\`event_types=["message"]\`) and holds a long-poll on it, polling again after each heartbeat, as an idle Zulip client does; ${String(WARM_UP_CLIENTS)} clients came first, and the server with their queues is the baseline (${mib(clients.baseline.rss)} resident, ${mib(clients.baseline.heapUsed)} heap). Per client: the growth over the baseline divided by N; per added client: the growth from the row before divided by the clients added (the baseline's resident memory moves by several MB between runs, which moves the first figure at 1,000 clients by several KB).`,
    "",
    table(
      [
        "connected clients",
        "resident",
        "heap in use",
        "per client, resident",
        "per client, heap",
        "per added client, resident",
        "failed polls",
      ],
      clients.steps.map((step, i) => [
        step.clients.toLocaleString("en-US"),
        mib(step.memory.rss),
        mib(step.memory.heapUsed),
        `**${perClient(step, "rss")}**`,
        perClient(step, "heapUsed"),
        perAdded(step, clients.steps[i - 1]),
        String(step.errors),
      ]),
    ),
    ...(again.length === 0
      ? []
      : [
          "",
          `At ${first.toLocaleString("en-US")} clients on ${String(firstSteps.length)} fresh servers (the first is the table's row), resident per client: ${firstSteps.map(kib).join(", ")}; median **${kib(firstMedian)}** (their baselines: ${[clients, ...again].map((outcome) => mib(outcome.baseline.rss)).join(", ")}).`,
        ]),
  ].join("\n");
  if (CHOSEN === undefined) writeSection(DOCS, "chat-memory", markdown);
  process.stdout.write(`${markdown}\n`);
}

void main().catch((error: unknown) => {
  process.stderr.write(`${String(error)}\n${(error as Error).stack ?? ""}\n`);
  process.exit(1);
});
