/**
 * Many connected clients at once (issue 53): N clients, each with an event
 * queue (`event_types=["message"]`) and a held long-poll, which the server
 * ends with Zulip's heartbeat when nothing happens; the first 1,000 of them
 * follow one channel, to which a sender posts a message every second, while
 * 100 people act as the load simulation's users do (bench/sim-users.ts) in
 * channels of their own. The same scenario at 1,000 and at 10,000 clients
 * (fresh server each): every message must reach each of the channel's 1,000
 * followers once, in order, and the 10,000-client delivery p99 should be
 * within 2x the 1,000-client one. chat-api in production mode on
 * PostgreSQL, one replica; the long-polls in worker threads of the load
 * (bench/poll-worker.ts). Writes the `chat-connections` section of
 * docs/benchmarks.md.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { join } from "node:path";
import { Worker } from "node:worker_threads";
import { machine, quantile, table, writeSection } from "@repo/bench-kit";
import {
  NO_ANSWER,
  type User,
  call,
  createLoadRealm,
  now,
  registerMessageQueues,
  startReplicas,
} from "./load-realm";
import { type PollCost, onBare, pollCost } from "./poll-cost";
import type { FromWorker, PollJob, PollReport, ToWorker } from "./poll-worker";
import { SimUser, World, resetTally, tally } from "./sim-users";

const DOCS = join(__dirname, "../../../docs/benchmarks.md");

/** BENCH_CONNECTIONS=1000,3000: the client counts to run (the report is not written). */
const CHOSEN = process.env.BENCH_CONNECTIONS?.split(",").map(Number);
const CLIENT_COUNTS = CHOSEN ?? [1000, 10_000];
/** The channel's followers among the clients, and the sender's messages' audience. */
const FOLLOWERS = 1000;
/** The simulated people acting beside the clients, and their channels. */
const ACTORS = 100;
const ACTOR_CHANNELS = 4;
const ACTION_SECONDS = 30;
/** How long the sender posts (a message a second); longer than the heartbeat, so every idle poll gets one. */
const SECONDS = Number(process.env.BENCH_CONNECTIONS_SECONDS ?? 60);
const POLL_WORKERS = 2;

interface Outcome {
  clients: number;
  sent: number;
  sendMs: number[];
  deliveryMs: number[];
  errors: number;
  lost: number;
  duplicated: number;
  disordered: number;
  /** Heartbeat events the clients received. */
  heartbeats: number;
  actorRequests: number;
  actorP99Ms: number;
  failures: string[];
}

/** Sends a worker a message and waits for the one of `type` it answers with. */
function message(worker: Worker, type: FromWorker["type"]): Promise<FromWorker> {
  return new Promise((resolve, reject) => {
    const listen = (data: FromWorker) => {
      if (data.type !== type) return;
      worker.off("message", listen);
      resolve(data);
    };
    worker.on("message", listen);
    worker.once("error", reject);
  });
}

async function run(
  clients: number,
  url: string,
  users: User[],
  channels: number[],
  subscriptions: number[][],
): Promise<Outcome> {
  resetTally();
  const [server] = await startReplicas(url, 1, { CHAT_LOG_LEVEL: "warn" });
  if (server === undefined) throw new Error("no server");
  const { port } = server;
  const failures: string[] = [];
  try {
    const listeners = users.slice(0, clients);
    const queues: PollJob["listeners"] = (await registerMessageQueues(port, listeners)).map(
      (queue, i) => ({
        user: listeners[i] ?? users[0] ?? { id: 0, email: "", apiKey: "" },
        port,
        queue,
      }),
    );
    const workers = Array.from(
      { length: POLL_WORKERS },
      (_, w) =>
        new Worker(join(__dirname, "poll-worker.ts"), {
          workerData: {
            listeners: queues.filter((_q, i) => i % POLL_WORKERS === w),
            expected: Infinity,
          } satisfies PollJob,
        }),
    );
    await Promise.all(workers.map((worker) => message(worker, "ready")));
    // The simulated people join, then the sender starts.
    const world = new World(channels, subscriptions, ACTION_SECONDS);
    const actors = users.slice(users.length - ACTORS);
    world.users.push(
      ...actors.map((user, k) => new SimUser(users.length - ACTORS + k, user, port, world)),
    );
    await Promise.all(world.users.map((actor) => actor.start()));
    await sleep(1000);
    const sender = users[0];
    if (sender === undefined) throw new Error("no sender");
    const sentAt = new Map<number, number>();
    const sendMs: number[] = [];
    const started = now();
    for (let n = 0; now() < started + SECONDS * 1000; n++) {
      const at = now();
      const reply = await call(port, sender, "POST", "/messages", {
        type: "stream",
        to: String(channels[0] ?? 0),
        topic: "connections",
        content: `message ${String(n)}`,
      }).catch((error: unknown) => {
        failures.push(`send: ${String(error)}`);
        return NO_ANSWER;
      });
      sendMs.push(now() - at);
      if (reply.status === 200) sentAt.set(Number(reply.json.id), at);
      else if (reply.status !== 0) failures.push(`send: HTTP ${String(reply.status)}`);
      const next = started + (n + 1) * 1000;
      if (next > now()) await sleep(next - now());
    }
    // The last message's deliveries, then the reports.
    await sleep(3000);
    for (const actor of world.users) actor.stop();
    tally.stopping = true;
    const reports = await Promise.all(
      workers.map(async (worker) => {
        const report = message(worker, "report");
        worker.postMessage({ type: "stop" } satisfies ToWorker);
        return ((await report) as { report: PollReport }).report;
      }),
    );
    await Promise.all(workers.map((worker) => worker.terminate()));
    const sent = [...sentAt.keys()];
    let lost = 0;
    let duplicated = 0;
    let disordered = 0;
    let heartbeats = 0;
    const deliveryMs: number[] = [];
    const followers = new Set(users.slice(0, FOLLOWERS));
    for (const [w, report] of reports.entries()) {
      const mine = queues.filter((_q, i) => i % POLL_WORKERS === w);
      for (const [k, received] of report.received.entries()) {
        const user = mine[k]?.user;
        const expected = user !== undefined && followers.has(user) ? sent : [];
        const got = new Set(received);
        lost += expected.filter((id) => !got.has(id)).length;
        duplicated += received.length - got.size;
        disordered += received.filter((id, j) => j > 0 && id < (received[j - 1] ?? 0)).length;
        // The queues ask for messages only: their other events are heartbeats.
        heartbeats += (report.eventIds[k]?.length ?? 0) - received.length;
      }
      for (const [id, at] of report.arrivals) {
        const sentTime = sentAt.get(id);
        if (sentTime !== undefined) deliveryMs.push(at - sentTime);
      }
      failures.push(...report.failures);
    }
    const actorTimes = tally.requests.map((r) => r.ms).sort((a, b) => a - b);
    failures.push(...tally.failures);
    return {
      clients,
      sent: sent.length,
      sendMs: sendMs.sort((a, b) => a - b),
      deliveryMs: deliveryMs.sort((a, b) => a - b),
      errors:
        reports.reduce((sum, r) => sum + r.errors, 0) +
        tally.requests.filter((r) => r.status === 0 || r.status >= 400).length,
      lost,
      duplicated,
      disordered,
      heartbeats,
      actorRequests: tally.requests.length,
      actorP99Ms: quantile(actorTimes, 0.99),
      failures: [...new Set(failures)].slice(0, 5),
    };
  } finally {
    tally.stopping = true;
    await server.stop();
  }
}

async function main(): Promise<void> {
  const most = Math.max(...CLIENT_COUNTS);
  // Users: the clients (the first FOLLOWERS follow channel 0), then the actors.
  const realm = await createLoadRealm(
    "bench_connections",
    most + ACTORS,
    1 + ACTOR_CHANNELS,
    (i) =>
      i < FOLLOWERS
        ? [0]
        : i >= most
          ? [1 + (i % ACTOR_CHANNELS), 1 + ((i + 1) % ACTOR_CHANNELS)]
          : [],
  );
  let yardstick: PollCost;
  const outcomes: Outcome[] = [];
  try {
    yardstick = await onBare(undefined, (port, pid) => pollCost(port, pid, realm.users));
    for (const clients of [...CLIENT_COUNTS].sort((a, b) => a - b)) {
      process.stdout.write(`${String(clients)} clients...\n`);
      const outcome = await run(
        clients,
        realm.url,
        [...realm.users.slice(0, clients), ...realm.users.slice(most)],
        realm.channels,
        [...realm.subscriptions.slice(0, clients), ...realm.subscriptions.slice(most)],
      );
      process.stdout.write(
        `${JSON.stringify({ ...outcome, sendMs: undefined, deliveryMs: undefined })}\n`,
      );
      outcomes.push(outcome);
    }
  } finally {
    await realm.drop();
  }
  const ms = (v: number) => `${v.toFixed(0)} ms`;
  const base = outcomes[0];
  const markdown = [
    "## chat-api: many connected clients (issue 53)",
    "",
    `N clients, each an event queue (\`event_types=["message"]\`) and a held long-poll (the server answers a quiet one with its heartbeat after 50 s); the first ${FOLLOWERS.toLocaleString("en-US")} follow one channel, to which a sender posts a message a second for ${String(SECONDS)} s, while ${String(ACTORS)} people act as the load simulation's users do (a mean ${String(ACTION_SECONDS)} s between actions, in ${String(ACTOR_CHANNELS)} channels of their own). chat-api in production mode on PostgreSQL, one replica, a fresh process per row; the long-polls in ${String(POLL_WORKERS)} worker threads of the load. Delivery is timed from the start of the send to the poll answer carrying it, for each of the channel's followers. The machine's yardstick, a bare \`node:http\` server's CPU per poll answered at once: ${yardstick.micros.toFixed(0)} µs. ${machine([])}.`,
    "",
    table(
      [
        "clients",
        "messages",
        "send p50 / p99",
        "delivery p50",
        "delivery p99",
        "p99 vs 1,000 clients",
        "errors / lost / duplicated / out of order",
        "heartbeats received",
        "actors' requests, p99",
      ],
      outcomes.map((o) => [
        o.clients.toLocaleString("en-US"),
        String(o.sent),
        `${ms(quantile(o.sendMs, 0.5))} / ${ms(quantile(o.sendMs, 0.99))}`,
        ms(quantile(o.deliveryMs, 0.5)),
        `**${ms(quantile(o.deliveryMs, 0.99))}**`,
        base === undefined
          ? "-"
          : `${(quantile(o.deliveryMs, 0.99) / Math.max(1, quantile(base.deliveryMs, 0.99))).toFixed(2)}x`,
        `${String(o.errors)} / ${String(o.lost)} / ${String(o.duplicated)} / ${String(o.disordered)}`,
        String(o.heartbeats),
        `${String(o.actorRequests)}, ${ms(o.actorP99Ms)}`,
      ]),
    ),
    ...outcomes.flatMap((o) =>
      o.failures.length === 0
        ? []
        : [
            ``,
            `${o.clients.toLocaleString("en-US")} clients, first failures: ${o.failures.join("; ")}`,
          ],
    ),
  ].join("\n");
  if (CHOSEN === undefined) writeSection(DOCS, "chat-connections", markdown);
  process.stdout.write(`${markdown}\n`);
}

void main().catch((error: unknown) => {
  process.stderr.write(`${String(error)}\n${(error as Error).stack ?? ""}\n`);
  process.exit(1);
});
