/**
 * Real-time delivery (issue 25), as a client load sees it: N users, each
 * with one event queue (`POST /register`, `event_types=["message"]`)
 * long-polling `GET /events`; one channel they all subscribe to; messages
 * sent by one or more senders at once. chat-api (production start, rate
 * limit off) on PostgreSQL, one replica or two on the same database; the
 * long-polls run in two worker threads (bench/poll-worker.ts), the sends in
 * the main thread, over loopback (undici). Every delivered event
 * is checked: each queue receives every message once, in increasing id
 * order. Writes the `chat-realtime` section of docs/benchmarks.md.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { join } from "node:path";
import { type Served, machine, quantile, table, writeSection } from "@repo/bench-kit";
import { Worker } from "node:worker_threads";
import { Client } from "pg";
import {
  NO_ANSWER,
  type User,
  type CpuSnapshot,
  agent,
  call,
  cpuSnapshot,
  cpuSpent,
  createLoadRealm,
  now,
  startReplicas,
} from "./load-realm";
import { type PollCost, POLL_COST, answerHeaders, onBare, pollCost } from "./poll-cost";
import type { FromWorker, PollJob, ToWorker } from "./poll-worker";

const DOCS = join(__dirname, "../../../docs/benchmarks.md");
const MAX_USERS = 1000;
/** Worker threads holding the long-polls (the senders stay in the main thread). */
const POLL_WORKERS = 2;

interface Scenario {
  users: number;
  senders: number;
  perSender: number;
  replicas: 1 | 2;
  /** Instead of `perSender` messages: each sender sends one after the other for this long. */
  seconds?: number;
  /** Each message only once every listener has received the one before (one per poll answer). */
  lockstep?: boolean;
}

/** The ceiling comparison: one sender, back to back, to 1,000 long-polls. */
const CEILING: Scenario = {
  users: MAX_USERS,
  senders: 1,
  perSender: 0,
  replicas: 1,
  seconds: 5,
  lockstep: true,
};

/** Ceiling runs: chat-api, then the bare server, this many times; the median ratio is reported. */
const CEILING_ROUNDS = 3;

/** One round of the ceiling: chat-api's run and the bare server's right after it. */
interface CeilingRound {
  ours: Outcome;
  bare: Outcome;
}

/**
 * Issue 25's target scenario (50 senders x 4 to 1,000 queues), run on the
 * bare server too: what this machine allows with no database, no
 * authentication and no bookkeeping, for the same load.
 */
const TARGET: Scenario = { users: MAX_USERS, senders: 50, perSender: 4, replicas: 1 };

/**
 * BENCH_REALTIME=users:senders:perSender:replicas,...: only these scenarios; the report is not
 * written. With BENCH_CEILING=1 too, the ceiling's rounds, the bare server's 50-sender run and
 * both poll costs follow them (a full run always has them).
 */
const CHOSEN = process.env.BENCH_REALTIME?.split(",").map((spec): Scenario => {
  const [users = 0, senders = 0, perSender = 0, replicas = 1] = spec.split(":").map(Number);
  return { users, senders, perSender, replicas: replicas === 2 ? 2 : 1 };
});

const SCENARIOS: Scenario[] = CHOSEN ?? [
  { users: 30, senders: 1, perSender: 20, replicas: 1 },
  { users: 300, senders: 1, perSender: 20, replicas: 1 },
  { users: 1000, senders: 1, perSender: 20, replicas: 1 },
  { users: 300, senders: 20, perSender: 10, replicas: 1 },
  { users: 1000, senders: 50, perSender: 4, replicas: 1 },
  { users: 1000, senders: 50, perSender: 4, replicas: 2 },
];

interface Outcome {
  scenario: Scenario;
  sendMs: number[];
  deliveryMs: number[];
  sendSeconds: number;
  deliverySeconds: number;
  errors: number;
  lost: number;
  duplicated: number;
  disordered: number;
  failures: string[];
  /** Poll answers that carried at least one message, per second of sending. */
  answerRate: number;
  /** A message event as delivered (JSON), for the reference server. */
  sample: string | undefined;
  /** Poll answers that carried a message, over the whole run. */
  answers: number;
  /** The CPU used from the first send to the last delivery (or the end of a timed run's grace). */
  cpu: CpuSnapshot;
  /** The wall-clock seconds `cpu` was measured over. */
  cpuSeconds: number;
}

/** A server under load: where it listens, and its process (for its CPU). */
interface Target {
  port: number;
  pid: number | undefined;
}

/** A started replica as a {@link Target}. */
const target = (server: Served): Target => ({ port: server.port, pid: server.child.pid });

async function run(
  scenario: Scenario,
  targets: Target[],
  all: User[],
  channel: number,
): Promise<Outcome> {
  const ports = targets.map((t) => t.port);
  const pids = targets.map((t) => t.pid);
  const listeners = all.slice(0, scenario.users);
  const sentAt = new Map<number, number>();
  let errors = 0;
  /** What the errors were (the first few distinct ones are reported). */
  const failures: string[] = [];
  const expected =
    scenario.seconds === undefined ? scenario.senders * scenario.perSender : Infinity;
  const queues = await Promise.all(
    listeners.map(async (user, i) => {
      const port = ports[i % ports.length] ?? 0;
      const reply = await call(port, user, "POST", "/register", {
        event_types: '["message"]',
      });
      if (reply.status !== 200) throw new Error(`register: ${String(reply.status)}`);
      return { user, port, queue: String(reply.json.queue_id) };
    }),
  );
  // The long-polls run in worker threads, a slice of the listeners each.
  const workers = Array.from({ length: POLL_WORKERS }, (_, w) => {
    const job: PollJob = {
      listeners: queues.filter((_q, i) => i % POLL_WORKERS === w),
      expected,
    };
    return new Worker(join(__dirname, "poll-worker.ts"), { workerData: job });
  });
  const message = (worker: Worker, type: FromWorker["type"]) =>
    new Promise<FromWorker>((resolve, reject) => {
      const listen = (data: FromWorker) => {
        if (data.type !== type) return;
        worker.off("message", listen);
        resolve(data);
      };
      worker.on("message", listen);
      worker.once("error", reject);
    });
  const done = Promise.all(workers.map((worker) => message(worker, "done")));
  // Lockstep: the last round every worker has told of.
  const rounds = workers.map(() => 0);
  let roundWaiter: (() => void) | undefined;
  for (const [w, worker] of workers.entries())
    worker.on("message", (data: FromWorker) => {
      if (data.type !== "round") return;
      rounds[w] = data.count;
      roundWaiter?.();
    });
  const allReached = async (count: number) => {
    while (Math.min(...rounds) < count)
      await new Promise<void>((resolve) => {
        roundWaiter = resolve;
      });
  };
  await Promise.all(workers.map((worker) => message(worker, "ready")));
  // The first polls reach the server and wait there, as a connected client's do.
  await sleep(500);
  const sendMs: number[] = [];
  const senders = all.slice(0, scenario.senders);
  const cpuBefore = cpuSnapshot(pids);
  const started = now();
  await Promise.all(
    senders.map(async (sender, s) => {
      const port = ports[(s + 1) % ports.length] ?? 0;
      const until = scenario.seconds === undefined ? Infinity : now() + scenario.seconds * 1000;
      const count = scenario.seconds === undefined ? scenario.perSender : Infinity;
      for (let n = 0; n < count && now() < until; n++) {
        const before = now();
        const reply = await call(port, sender, "POST", "/messages", {
          type: "stream",
          to: String(channel),
          topic: "load",
          content: `sender ${String(s)} message ${String(n)}`,
        }).catch((error: unknown) => {
          failures.push(String(error));
          return NO_ANSWER;
        });
        sendMs.push(now() - before);
        if (reply.status !== 200) {
          errors += 1;
          if (reply.status !== 0)
            failures.push(`HTTP ${String(reply.status)}: ${JSON.stringify(reply.json)}`);
          continue;
        }
        // Delivery is timed from the send's start: a poll may answer before the send does.
        sentAt.set(Number(reply.json.id), before);
        if (scenario.lockstep === true) await allReached(n + 1);
      }
    }),
  );
  const sent = now();
  // Every delivery (a timed run: what arrives within 5 s of the last send).
  const grace = scenario.seconds === undefined ? 30_000 : 5_000;
  await Promise.race([done, sleep(grace)]);
  const cpu = cpuSpent(cpuBefore, cpuSnapshot(pids));
  const cpuSeconds = (now() - started) / 1000;
  const reports = await Promise.all(
    workers.map(async (worker) => {
      const report = message(worker, "report");
      worker.postMessage({ type: "stop" } satisfies ToWorker);
      const answer = await report;
      await worker.terminate();
      if (answer.type !== "report") throw new Error("no report");
      return answer.report;
    }),
  );
  const arrivals = reports.flatMap((r) => r.arrivals);
  const lastDelivery = arrivals.reduce((latest, [, at]) => Math.max(latest, at), started);
  const ids = [...sentAt.keys()];
  let lost = 0;
  let duplicated = 0;
  let disordered = 0;
  for (const report of reports) {
    errors += report.errors;
    failures.push(...report.failures);
    for (const [i, list] of report.received.entries()) {
      const seen = new Set(list);
      duplicated += list.length - seen.size;
      lost += ids.filter((id) => !seen.has(id)).length;
      // Zulip's contract: a queue's event ids increase.
      const order = report.eventIds[i] ?? [];
      for (let k = 1; k < order.length; k++)
        if ((order[k] ?? 0) <= (order[k - 1] ?? 0)) disordered += 1;
    }
  }
  return {
    scenario,
    sendMs,
    deliveryMs: arrivals.flatMap(([id, at]) => {
      const sent = sentAt.get(id);
      return sent === undefined ? [] : [at - sent];
    }),
    sendSeconds: (sent - started) / 1000,
    deliverySeconds: (lastDelivery - started) / 1000,
    errors,
    lost,
    duplicated,
    disordered,
    failures: [...new Set(failures)].slice(0, 5),
    answerRate:
      reports.reduce(
        (n, r) => n + r.answerTimes.filter((at) => at >= started && at <= sent).length,
        0,
      ) /
      ((sent - started) / 1000),
    sample: reports.find((r) => r.sample !== undefined)?.sample,
    answers: reports.reduce((n, r) => n + r.answerTimes.length, 0),
    cpu,
    cpuSeconds,
  };
}

/** The CPU of the servers, PostgreSQL and the load per poll answer of a run, in µs. */
function perAnswer(o: Outcome): number[] {
  return [o.cpu.servers, o.cpu.postgres, o.cpu.load].map((c) =>
    Math.round((c * 1e6) / Math.max(1, o.answers)),
  );
}

async function main(): Promise<void> {
  process.stdout.write(`filling a database with ${String(MAX_USERS)} listeners...\n`);
  const data = await createLoadRealm("chat_realtime", MAX_USERS, 1, () => [0]);
  const channel = data.channels[0] ?? 0;
  const outcomes: Outcome[] = [];
  let ceiling:
    { rounds: CeilingRound[]; bareTarget: Outcome; cost: PollCost; bareCost: PollCost } | undefined;
  try {
    for (const scenario of SCENARIOS) {
      const servers = await startReplicas(data.url, scenario.replicas);
      try {
        const outcome = await run(scenario, servers.map(target), data.users, channel);
        outcomes.push(outcome);
        process.stdout.write(
          `${JSON.stringify({ scenario, errors: outcome.errors, lost: outcome.lost, duplicated: outcome.duplicated, disordered: outcome.disordered, failures: outcome.failures })}\n`,
        );
      } finally {
        for (const server of servers) await server.stop();
      }
    }
    // The ceiling: a bare node:http server answering the same long-polls from
    // memory with the same bytes, under the same load (one sender, back to back).
    if (CHOSEN === undefined || process.env.BENCH_CEILING === "1") {
      // Rounds of chat-api then the bare server, one after the other: the machine's speed
      // drifts over minutes (the bare server's rate moved from 10,500 to 14,500/s within
      // an hour), so each ratio compares two runs made close together.
      const rounds: CeilingRound[] = [];
      let cost: PollCost | undefined;
      let sample: string | undefined;
      // A chat-api poll answer's headers: the bare server answers with them (the same bytes).
      let headers: [string, string][] | undefined;
      // The scenarios before wrote some 400,000 rows: vacuumed now, so that autovacuum
      // does not take the machine's CPU during the rounds (it did, in one run of three).
      const db = new Client({ connectionString: data.url });
      await db.connect();
      await db.query("VACUUM (ANALYZE)");
      await db.end();
      // A fresh bare server for each run (onBare): its queues start empty.
      for (let r = 0; r < CEILING_ROUNDS; r++) {
        const servers = await startReplicas(data.url, 1);
        let ours: Outcome;
        try {
          ours = await run(CEILING, servers.map(target), data.users, channel);
          const [server] = servers;
          if (server === undefined) throw new Error("no replica");
          cost ??= await pollCost(server.port, server.child.pid, data.users);
          const [user] = data.users;
          if (user === undefined) throw new Error("no user");
          headers ??= await answerHeaders(server.port, user);
        } finally {
          for (const server of servers) await server.stop();
        }
        sample ??= ours.sample;
        const bare = await onBare(
          sample,
          (port, pid) => run(CEILING, [{ port, pid }], data.users, channel),
          headers,
        );
        rounds.push({ ours, bare });
        for (const o of [ours, bare])
          process.stdout.write(
            `${JSON.stringify({ round: r, ceiling: o.answerRate, usPerAnswer: perAnswer(o), messages: o.sendMs.length, sendP50: quantile(o.sendMs, 0.5), deliveryP50: quantile(o.deliveryMs, 0.5), errors: o.errors, lost: o.lost, duplicated: o.duplicated, disordered: o.disordered })}\n`,
          );
      }
      if (cost === undefined) throw new Error("no ceiling round");
      ceiling = {
        rounds,
        bareTarget: await onBare(
          sample,
          (port, pid) => run(TARGET, [{ port, pid }], data.users, channel),
          headers,
        ),
        cost,
        bareCost: await onBare(sample, (port, pid) => pollCost(port, pid, data.users), headers),
      };
      process.stdout.write(
        `${JSON.stringify({ pollCost: ceiling.cost, bare: ceiling.bareCost })}\n`,
      );
    }
  } finally {
    await agent.close();
    await data.drop();
  }
  const ms = (v: number) => `${v.toFixed(0)} ms`;
  /** Cores used while sending and delivering: the machine's busy share, then by whom. */
  const cores = ({ cpu, cpuSeconds }: Outcome) => {
    const used = (seconds: number) => (seconds / cpuSeconds).toFixed(2);
    const machineShare = cpu.busy / Math.max(1e-9, cpu.total);
    return `${(machineShare * 100).toFixed(0)} % (${used(cpu.servers)} / ${used(cpu.postgres)} / ${used(cpu.load)})`;
  };
  const sorted = (v: number[]) => [...v].sort((x, y) => x - y);
  const row = (o: Outcome, server: string) => {
    const send = sorted(o.sendMs);
    const delivery = sorted(o.deliveryMs);
    const messages = o.scenario.senders * o.scenario.perSender;
    return [
      server,
      o.scenario.users.toLocaleString("en-US"),
      o.scenario.senders === 1 ? "1" : `${String(o.scenario.senders)} at once`,
      messages.toLocaleString("en-US"),
      ms(quantile(send, 0.5)),
      ms(quantile(send, 0.99)),
      (messages / o.sendSeconds).toFixed(1),
      (o.deliveryMs.length / o.deliverySeconds).toFixed(0),
      ms(quantile(delivery, 0.5)),
      ms(quantile(delivery, 0.99)),
      `${String(o.errors)} / ${String(o.lost)} / ${String(o.duplicated)} / ${String(o.disordered)}`,
      cores(o),
    ];
  };
  const rows = [
    ...outcomes.map((o) =>
      row(o, `chat-api, ${o.scenario.replicas === 1 ? "1 replica" : "2 replicas"}`),
    ),
    ...(ceiling === undefined ? [] : [row(ceiling.bareTarget, "bare `node:http` (reference)")]),
  ];
  const markdown = [
    "## chat-api: real-time delivery (issue 25)",
    "",
    `N users, each with one event queue long-polling \`GET /events\` (\`event_types=["message"]\`), all subscribed to one channel; senders post to it (each sender one message after the other, the senders at once). chat-api in production mode on PostgreSQL (rate limit off), one replica or two on the same database (listeners and senders spread over them), and the 50-sender scenario once more on the bare \`node:http\` server of the ceiling below (no database, no authentication: what this machine allows for that load); the long-polls in two worker threads of the load process, the sends in its main thread, over loopback. Delivery is timed from the start of the send. Every queue's events are checked. "Machine CPU" is both cores' busy share from the first send to the last delivery, then the cores used by the server processes, PostgreSQL's and the load's. ${machine([])}.`,
    "",
    table(
      [
        "server",
        "users = queues",
        "senders",
        "messages",
        "send p50",
        "send p99",
        "messages/s",
        "deliveries/s",
        "delivery p50",
        "delivery p99",
        "errors / lost / duplicated / out of order",
        "machine CPU (cores: server / PostgreSQL / load)",
      ],
      rows,
    ),
    ...(ceiling === undefined
      ? []
      : [
          "",
          (() => {
            const { rounds, cost, bareCost } = ceiling;
            const rate = (o: Outcome) => o.answerRate.toFixed(0);
            const check = (o: Outcome) =>
              `${String(o.errors)} / ${String(o.lost)} / ${String(o.duplicated)} / ${String(o.disordered)}`;
            const micros = (c: PollCost) => `${c.micros.toFixed(0)} µs`;
            const cpu = (o: Outcome) =>
              perAnswer(o)
                .filter((_, k) => k !== 1)
                .join(" / ");
            const costLine = `A poll answered at once (\`dont_block\`, its queue empty; ${String(POLL_COST.users)} users polling one after the other, ${String(POLL_COST.polls)} polls each after ${String(POLL_COST.warmup)} to warm up), in the server process's CPU: chat-api ${micros(cost)} (${String(cost.failures)} failed of ${cost.polls.toLocaleString("en-US")}), the bare server, answering with the same bytes (chat-api's headers, then the body), ${micros(bareCost)} (${String(bareCost.failures)} failed): **${(cost.micros / bareCost.micros).toFixed(1)}x** its cost.`;
            const ratios = rounds.map(({ ours, bare }) => ours.answerRate / bare.answerRate);
            const each = rounds
              .map(
                ({ ours, bare }, r) =>
                  `${rate(ours)}/s against ${rate(bare)}/s (${(ratios[r] ?? 0).toFixed(2)}x; ${String(ours.sendMs.length)} and ${String(bare.sendMs.length)} messages; CPU per answer, server / load: ${cpu(ours)} µs and ${cpu(bare)} µs; errors / lost / duplicated / out of order ${check(ours)} and ${check(bare)})`,
              )
              .join("; ");
            return `${costLine}\n\nThe ceiling: for ${String(CEILING.seconds)} s, one sender posts to ${CEILING.users.toLocaleString("en-US")} long-polls, each message once every listener has the one before (one message per poll answer, the same bytes); poll answers per second of sending, chat-api against a bare \`node:http\` server holding the same polls and answering them from memory with the same bytes, headers included (bench/poll-reference.ts), same load, run right after it, ${String(rounds.length)} rounds: ${each}. chat-api: **${quantile(
              [...ratios].sort((a, b) => a - b),
              0.5,
            ).toFixed(2)}x** the ceiling (the median round).`;
          })(),
        ]),
  ].join("\n");
  if (CHOSEN === undefined) writeSection(DOCS, "chat-realtime", markdown);
  process.stdout.write(`${markdown}\n`);
}

void main().catch((error: unknown) => {
  process.stderr.write(`${String(error)}\n${(error as Error).stack ?? ""}\n`);
  process.exit(1);
});
