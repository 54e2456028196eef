/**
 * The load simulator (issue 25), modelled on Mattermost's load tool:
 * simulated users, each with an event queue (`POST /register`) and a
 * long-poll (`GET /events`) always open, who act at random (exponential
 * pauses, `actionSeconds` on average): send a channel message, send a
 * direct message, mark what they received as read, fetch a channel's
 * history; and report their presence every minute, as Zulip's clients do
 * (a modern client's: `slim_presence`, and `last_update_id` from the
 * previous answer, so that it hears only of changes).
 * Users are added `step` at a time, every `stepSeconds`, until one of
 * Mattermost's thresholds is crossed over a step (average request time past
 * 100 ms, p99 past 2 s, or 5xx answers and time-outs past 0.025 % of
 * requests) or `maxUsers` are connected. Every delivered message is checked:
 * each queue registered before a send began receives it once, no queue of
 * someone outside its audience receives it, ids increase per queue.
 *
 * The first step warms the server up (it starts cold): it is shown, and not
 * judged.
 *
 * One chat-api replica, or more on the same PostgreSQL. The users run in
 * LOAD_THREADS worker threads of the load process (bench/sim-worker.ts), so
 * that no one event loop's delay is in the times it measures.
 * BENCH_SIM=maxUsers:step:stepSeconds:actionSeconds[:replicas] changes the settings
 * (the report is not written then); BENCH_SIM_NOSTOP=1 goes on past a
 * crossed step (for a CPU profile, whose own cost crosses early). Writes the
 * `chat-simulation` section of docs/benchmarks.md.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { join } from "node:path";
import { availableParallelism } from "node:os";
import { Worker } from "node:worker_threads";
import { machine, quantile, table, writeSection } from "@repo/bench-kit";
import { agent, cpuSnapshot, cpuSpent, createLoadRealm, now, startReplicas } from "./load-realm";
import { type PollCost, POLL_COST, onBare, pollCost } from "./poll-cost";
import {
  PRESENCE_SECONDS,
  REQUEST_TIMEOUT_MS,
  type SharedRoster,
  resetTally,
  sharedRoster,
  tally,
} from "./sim-users";
import type { Collected, FromSimWorker, SimJob, ToSimWorker } from "./sim-worker";

const DOCS = join(__dirname, "../../../docs/benchmarks.md");
const CHANNELS = 40;
/** Each user's channels (indexes), about three. */
const channelsOf = (i: number) => [i % CHANNELS, (i * 7 + 11) % CHANNELS, (i * 13 + 29) % CHANNELS];
/** The load's threads: the simulated users are spread over them (bench/sim-worker.ts). */
const LOAD_THREADS = 2;
/** Mattermost's thresholds. */
const LIMITS = { averageMs: 100, p99Ms: 2000, failedShare: 0.00025 };

const CUSTOM = process.env.BENCH_SIM?.split(":").map(Number);
const SETTINGS = {
  maxUsers: CUSTOM?.[0] ?? 3000,
  step: CUSTOM?.[1] ?? 250,
  stepSeconds: CUSTOM?.[2] ?? 15,
  actionSeconds: CUSTOM?.[3] ?? 30,
  /** Replicas on the same PostgreSQL (users spread over them): one unless asked. */
  replicas: [CUSTOM?.[4] ?? 1],
};

interface Step {
  users: number;
  requestsPerSecond: number;
  averageMs: number;
  p99Ms: number;
  failed: number;
  requests: number;
  messagesPerSecond: number;
  deliveriesPerSecond: number;
  deliveryP50: number;
  deliveryP99: number;
  cpu: number;
  /** Cores used over the step: the server, the load, the rest (PostgreSQL mostly). */
  serverCores: number;
  loadCores: number;
  otherCores: number;
  loopP99: number;
  crossed: string[];
  /**
   * The first step: the server starts cold (its code interpreted until V8
   * compiles it, its caches and connections empty). Shown, not judged.
   */
  warmUp: boolean;
}

/** What one run measured. */
interface Outcome {
  replicas: number;
  steps: Step[];
  verdict: ReturnType<typeof check>;
  failures: string[];
  /** The machine's yardstick, measured before the ramp: a bare server's poll. */
  yardstick: PollCost;
}

/** One ramp against `replicas` chat-api processes on a database of its own. */
async function simulate(replicas: number): Promise<Outcome> {
  resetTally();
  process.stdout.write(`filling a database with ${String(SETTINGS.maxUsers)} users...\n`);
  const realm = await createLoadRealm("chat_simulation", SETTINGS.maxUsers, CHANNELS, channelsOf);
  // How fast this machine is right now: its speed moved threefold between runs.
  const yardstick = await onBare(undefined, (port, pid) => pollCost(port, pid, realm.users));
  const servers = await startReplicas(realm.url, replicas);
  const roster = sharedRoster(realm.users);
  const job: SimJob = {
    roster,
    channels: realm.channels,
    subscriptions: realm.subscriptions,
    actionSeconds: SETTINGS.actionSeconds,
    ports: servers.map((server) => server.port),
  };
  const workers = Array.from(
    { length: LOAD_THREADS },
    () => new Worker(join(__dirname, "sim-worker.ts"), { workerData: job }),
  );
  const ask = (worker: Worker, message: ToSimWorker, answer: FromSimWorker["type"]) =>
    new Promise<FromSimWorker>((resolve, reject) => {
      const listen = (data: FromSimWorker) => {
        if (data.type !== answer) return;
        worker.off("message", listen);
        worker.off("error", reject);
        resolve(data);
      };
      worker.on("message", listen);
      worker.once("error", reject);
      worker.postMessage(message);
    });
  /** Each thread's sends under way and ids out of order, as last collected. */
  const inFlight = workers.map(() => 0);
  const disordered = workers.map(() => 0);
  /** What the threads noted since the last call, into this thread's tally; their loop p99, the worst. */
  const collect = async (): Promise<number> => {
    const answers = await Promise.all(workers.map((w) => ask(w, { type: "collect" }, "collected")));
    let loopP99 = 0;
    answers.forEach((answer, w) => {
      if (answer.type !== "collected") return;
      const c: Collected = answer.collected;
      tally.requests.push(...c.requests);
      tally.arrivals.push(...c.arrivals);
      for (const [id, sent] of c.sends) tally.sends.set(id, sent);
      for (const failure of c.failures) tally.failures.add(failure);
      tally.pollFailures += c.pollFailures;
      inFlight[w] = c.sendsInFlight;
      disordered[w] = c.disordered;
      loopP99 = Math.max(loopP99, c.loopP99);
    });
    tally.sendsInFlight = inFlight.reduce((n, v) => n + v, 0);
    return loopP99;
  };
  const registered = () => roster.registeredAt.filter((at) => at !== Infinity).length;
  const verdict = () =>
    check(
      roster,
      disordered.reduce((n, v) => n + v, 0),
    );
  const steps: Step[] = [];
  const pids = servers.map((s) => s.child.pid);
  let joined = 0;
  try {
    for (let target = SETTINGS.step; target <= SETTINGS.maxUsers; target += SETTINGS.step) {
      const begin = now();
      const cpuBefore = cpuSnapshot(pids);
      await collect();
      // The step's users join at an even pace over its first half (a login every
      // stepSeconds / 2 / step); a slow registration does not hold the next ones back.
      const adding = Math.max(0, Math.min(target, realm.users.length) - joined);
      const pace = (SETTINGS.stepSeconds * 500) / Math.max(1, adding);
      const joins = Array.from({ length: adding }, (_, k) => ({
        index: joined + k,
        delayMs: k * pace,
      }));
      joined += adding;
      await Promise.all(
        workers.map((worker, w) =>
          ask(
            worker,
            { type: "join", joins: joins.filter(({ index }) => index % LOAD_THREADS === w) },
            "joined",
          ),
        ),
      );
      const left = begin + SETTINGS.stepSeconds * 1000 - now();
      if (left > 0) await sleep(left);
      const end = now();
      const spent = cpuSpent(cpuBefore, cpuSnapshot(pids));
      const loopP99 = await collect();
      const busyShare = spent.busy / Math.max(1e-9, spent.total);
      const serverCores = spent.servers / ((end - begin) / 1000);
      const loadCores = spent.load / ((end - begin) / 1000);
      const busyCores = busyShare * availableParallelism();
      const window = tally.requests.filter((r) => r.at >= begin && r.at < end);
      const times = window.map((r) => r.ms).sort((x, y) => x - y);
      const failed = window.filter((r) => r.status === 0 || r.status >= 500).length;
      const seconds = (end - begin) / 1000;
      const delivered = tally.arrivals.filter((a) => a.at >= begin && a.at < end);
      const latency = delivered
        .flatMap((a) => {
          const sent = tally.sends.get(a.message);
          return sent === undefined ? [] : [a.at - sent.at];
        })
        .sort((x, y) => x - y);
      const step: Step = {
        users: registered(),
        requestsPerSecond: window.length / seconds,
        averageMs: times.reduce((s, v) => s + v, 0) / Math.max(1, times.length),
        p99Ms: quantile(times, 0.99),
        failed,
        requests: window.length,
        messagesPerSecond: window.filter((r) => r.kind.startsWith("send")).length / seconds,
        deliveriesPerSecond: delivered.length / seconds,
        deliveryP50: quantile(latency, 0.5),
        deliveryP99: quantile(latency, 0.99),
        cpu: busyShare,
        serverCores,
        loadCores,
        otherCores: Math.max(0, busyCores - serverCores - loadCores),
        loopP99,
        crossed: [],
        warmUp: steps.length === 0,
      };
      if (step.averageMs > LIMITS.averageMs) step.crossed.push("average > 100 ms");
      if (step.p99Ms > LIMITS.p99Ms) step.crossed.push("p99 > 2 s");
      if (failed + tally.pollFailures > LIMITS.failedShare * window.length)
        step.crossed.push("5xx and time-outs > 0.025 %");
      tally.pollFailures = 0;
      steps.push(step);
      const kinds = new Map<string, number[]>();
      for (const r of window) kinds.set(r.kind, [...(kinds.get(r.kind) ?? []), r.ms]);
      const byKind = [...kinds].map(
        ([kind, list]) =>
          `${kind}: ${String(list.length)} x ${(list.reduce((t, v) => t + v, 0) / list.length).toFixed(1)} ms`,
      );
      process.stdout.write(`${JSON.stringify({ ...step, byKind })}\n`);
      if (step.crossed.length > 0 && !step.warmUp && process.env.BENCH_SIM_NOSTOP !== "1") break;
    }
    // No more actions; the last sends answer and their deliveries arrive before the check.
    for (const worker of workers) worker.postMessage({ type: "quiet" } satisfies ToSimWorker);
    await collect();
    for (let waited = 0; waited < REQUEST_TIMEOUT_MS && tally.sendsInFlight > 0; waited += 100) {
      await sleep(100);
      await collect();
    }
    for (let waited = 0; waited < 15_000 && verdict().lost > 0; waited += 500) {
      await sleep(500);
      await collect();
    }
    tally.stopping = true;
    for (const worker of workers) worker.postMessage({ type: "stopping" } satisfies ToSimWorker);
  } finally {
    tally.stopping = true;
    for (const server of servers) await server.stop();
    await Promise.all(workers.map((worker) => worker.terminate()));
    await realm.drop();
  }
  return {
    replicas,
    steps,
    verdict: verdict(),
    failures: [...tally.failures].slice(0, 3),
    yardstick,
  };
}

async function main(): Promise<void> {
  const outcomes: Outcome[] = [];
  try {
    for (const replicas of SETTINGS.replicas) outcomes.push(await simulate(replicas));
  } finally {
    await agent.close();
  }
  report(outcomes);
}

/** Every message's deliveries against its audience (`disordered`: ids out of order, counted by the threads). */
function check(
  roster: SharedRoster,
  disordered: number,
): {
  lost: number;
  duplicated: number;
  stray: number;
  disordered: number;
  deliveries: number;
} {
  const got = new Map<number, Map<number, number>>();
  for (const a of tally.arrivals) {
    let users = got.get(a.message);
    if (users === undefined) got.set(a.message, (users = new Map<number, number>()));
    users.set(a.user, (users.get(a.user) ?? 0) + 1);
  }
  let lost = 0;
  let duplicated = 0;
  let stray = 0;
  for (const [message, users] of got) {
    for (const count of users.values()) duplicated += count - 1;
    const sent = tally.sends.get(message);
    if (sent === undefined) continue;
    // Someone outside the message's audience received it.
    const audience = new Set(sent.audience);
    for (const user of users.keys()) if (!audience.has(user)) stray += 1;
  }
  for (const [message, sent] of tally.sends) {
    const users = got.get(message);
    // Everyone of its audience who registered before the send began receives it
    // (one who registered while it ran may, or may not).
    for (const user of sent.audience)
      if ((roster.registeredAt[user] ?? Infinity) < sent.at && users?.has(user) !== true) lost += 1;
  }
  return { lost, duplicated, stray, disordered, deliveries: tally.arrivals.length };
}

function report(outcomes: Outcome[]): void {
  const ms = (v: number) => `${v.toFixed(0)} ms`;
  const rows = outcomes.flatMap(({ replicas, steps }) =>
    steps.map((s) => [
      String(replicas),
      s.users.toLocaleString("en-US"),
      s.requestsPerSecond.toFixed(0),
      ms(s.averageMs),
      ms(s.p99Ms),
      `${String(s.failed)} of ${s.requests.toLocaleString("en-US")}`,
      s.messagesPerSecond.toFixed(1),
      s.deliveriesPerSecond.toFixed(0),
      ms(s.deliveryP50),
      ms(s.deliveryP99),
      `${(s.cpu * 100).toFixed(0)} %`,
      `${s.serverCores.toFixed(2)} / ${s.loadCores.toFixed(2)} / ${s.otherCores.toFixed(2)}`,
      ms(s.loopP99),
      `${s.warmUp ? "warm-up, not judged: " : ""}${s.crossed.length === 0 ? "within" : s.crossed.join(", ")}`,
    ]),
  );
  const summaries = outcomes.map(({ replicas, steps, verdict, failures: seen, yardstick }) => {
    const judged = steps.filter((s) => !s.warmUp);
    const crossedAt = judged.findIndex((s) => s.crossed.length > 0);
    const held = (crossedAt === -1 ? judged.at(-1) : judged[crossedAt - 1])?.users ?? 0;
    const crossed = judged[crossedAt];
    return `- ${replicas === 1 ? "One replica" : `${String(replicas)} replicas`}: **held ${held.toLocaleString("en-US")} concurrent users** within the thresholds${crossed === undefined ? " (the most this run adds; none crossed)" : ` (crossed at ${crossed.users.toLocaleString("en-US")}: ${crossed.crossed.join(", ")})`}. Deliveries checked: ${verdict.deliveries.toLocaleString("en-US")}; lost ${String(verdict.lost)}, duplicated ${String(verdict.duplicated)}, delivered outside the audience ${String(verdict.stray)}, ids out of order ${String(verdict.disordered)}.${seen.length === 0 ? "" : ` Errors seen: ${seen.join("; ")}.`} The machine's speed before the ramp: a bare \`node:http\` server's poll answered at once cost ${yardstick.micros.toFixed(0)} µs of its CPU (${String(POLL_COST.users)} users polling one after the other, ${String(POLL_COST.polls)} polls each; the real-time section's yardstick too).`;
  });
  const markdown = [
    "## chat-api: load simulation (issue 25)",
    "",
    `Simulated users (Mattermost's load tool as the model), each with an event queue (\`event_types=["message","update_message_flags"]\`) and a long-poll always open, each acting every ${String(SETTINGS.actionSeconds)} s on average (exponential pauses): mark what it received as read (4 in 9), fetch a channel's last 20 messages (2 in 9; also when it has nothing to mark), send a message to one of its ~3 channels (2 in 9; ${String(CHANNELS)} channels, ${SETTINGS.maxUsers.toLocaleString("en-US")} members in all) or a direct message (1 in 9); and report its presence every ${String(PRESENCE_SECONDS)} s as Zulip's modern clients do (\`slim_presence\`, \`last_update_id\` of the previous answer: changes only). ${String(SETTINGS.step)} users join every ${String(SETTINGS.stepSeconds)} s, at an even pace over the step's first half (their registrations are requests of the step) until a threshold of Mattermost's is crossed over a step: average request time past 100 ms, p99 past 2 s, 5xx and time-outs (${String(REQUEST_TIMEOUT_MS / 1000)} s) past 0.025 % of requests (the first step, in which the server warms up from a cold start, is shown and not judged). Requests are every call but the long-polls; delivery is timed from the start of the send. chat-api in production mode on PostgreSQL (rate limit off), one replica (or more on the same database, users spread over them); the load in one process over loopback, its users spread over ${String(LOAD_THREADS)} worker threads; "machine CPU" is both cores' busy share, then split in cores used by the server, the load and the rest (PostgreSQL, mostly), "load's loop p99" the worst of the load threads' event-loop delays. ${machine([])}.`,
    "",
    table(
      [
        "replicas",
        "users",
        "requests/s",
        "average",
        "p99",
        "5xx and time-outs",
        "messages/s",
        "deliveries/s",
        "delivery p50",
        "delivery p99",
        "machine CPU",
        "cores: server / load / rest",
        "load's loop p99",
        "thresholds",
      ],
      rows,
    ),
    "",
    ...summaries,
  ].join("\n");
  if (CUSTOM === undefined) writeSection(DOCS, "chat-simulation", markdown);
  process.stdout.write(`${markdown}\n`);
}

void main().catch((error: unknown) => {
  process.stderr.write(`${String(error)}\n`);
  process.exit(1);
});
