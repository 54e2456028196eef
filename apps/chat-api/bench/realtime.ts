/**
 * Real-time delivery (issue 25), as a client load sees it: N users, each
 * with one event queue (`POST /register`, `event_types=["message"]`)
 * long-polling `GET /events`; one channel they all subscribe to; messages
 * sent by one or more senders at once. chat-api (production start, rate
 * limit off) on PostgreSQL, one replica or two on the same database; the
 * load runs in this process over loopback (undici). Every delivered event
 * is checked: each queue receives every message once, in increasing id
 * order. Writes the `chat-realtime` section of docs/benchmarks.md.
 */
import { join } from "node:path";
import { freePort, machine, quantile, serve, table, writeSection } from "@repo/bench-kit";
import { NO_ANSWER, type User, agent, call, createLoadRealm, startReplicas } from "./load-realm";

const DOCS = join(__dirname, "../../../docs/benchmarks.md");
const MAX_USERS = 1000;
const TS = ["--conditions=@repo/source", "--require", "@swc-node/register"];

interface Scenario {
  users: number;
  senders: number;
  perSender: number;
  replicas: 1 | 2;
}

/** BENCH_REALTIME=users:senders:perSender:replicas,...: only these scenarios; the report is not written. */
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
  /** Poll answers that carried at least one message. */
  answers: number;
  /** A message event as delivered (JSON), for the reference server. */
  sample: string | undefined;
}

async function run(
  scenario: Scenario,
  ports: number[],
  all: User[],
  channel: number,
): Promise<Outcome> {
  const listeners = all.slice(0, scenario.users);
  const sentAt = new Map<number, number>();
  const received = listeners.map(() => [] as number[]);
  const eventIds = listeners.map(() => [] as number[]);
  /** Each delivery: the message and when it arrived (timed once every send has answered). */
  const arrivals: [number, number][] = [];
  let errors = 0;
  let answers = 0;
  let sample: string | undefined;
  /** What the errors were (the first few distinct ones are reported). */
  const failures: string[] = [];
  let stop = false;
  const expected = scenario.senders * scenario.perSender;
  let delivered = 0;
  let lastDelivery = 0;
  let allDelivered: () => void = () => undefined;
  const done = new Promise<void>((resolve) => {
    allDelivered = resolve;
  });
  const queues = await Promise.all(
    listeners.map(async (user, i) => {
      const port = ports[i % ports.length] ?? 0;
      const reply = await call(port, user, "POST", "/register", {
        event_types: '["message"]',
      });
      if (reply.status !== 200) throw new Error(`register: ${String(reply.status)}`);
      return { port, queue: String(reply.json.queue_id) };
    }),
  );
  const polls = listeners.map(async (user, i) => {
    const { port, queue } = queues[i] ?? { port: 0, queue: "" };
    let last = -1;
    while (!stop) {
      const reply = await call(port, user, "GET", "/events", {
        queue_id: queue,
        last_event_id: String(last),
      }).catch((error: unknown) => {
        failures.push(`poll: ${String(error)}`);
        return NO_ANSWER;
      });
      if (reply.status !== 200) {
        errors += 1;
        if (reply.status !== 0) failures.push(`poll: HTTP ${String(reply.status)}`);
        continue;
      }
      const now = performance.now();
      let carried = false;
      for (const event of (reply.json.events ?? []) as {
        id: number;
        type: string;
        message?: { id: number };
      }[]) {
        eventIds[i]?.push(event.id);
        last = Math.max(last, event.id);
        if (event.type !== "message" || event.message === undefined) continue;
        carried = true;
        sample ??= JSON.stringify(event);
        received[i]?.push(event.message.id);
        arrivals.push([event.message.id, now]);
        delivered += 1;
        lastDelivery = now;
        if (delivered === expected * listeners.length) allDelivered();
      }
      if (carried) answers += 1;
    }
  });
  const sendMs: number[] = [];
  const senders = all.slice(0, scenario.senders);
  const started = performance.now();
  await Promise.all(
    senders.map(async (sender, s) => {
      const port = ports[(s + 1) % ports.length] ?? 0;
      for (let n = 0; n < scenario.perSender; n++) {
        const before = performance.now();
        const reply = await call(port, sender, "POST", "/messages", {
          type: "stream",
          to: String(channel),
          topic: "load",
          content: `sender ${String(s)} message ${String(n)}`,
        }).catch((error: unknown) => {
          failures.push(String(error));
          return NO_ANSWER;
        });
        const after = performance.now();
        sendMs.push(after - before);
        if (reply.status !== 200) {
          errors += 1;
          if (reply.status !== 0)
            failures.push(`HTTP ${String(reply.status)}: ${JSON.stringify(reply.json)}`);
          continue;
        }
        // Delivery is timed from the send's start: a poll may answer before the send does.
        sentAt.set(Number(reply.json.id), before);
      }
    }),
  );
  const sent = performance.now();
  await Promise.race([done, new Promise((resolve) => setTimeout(resolve, 30_000))]);
  stop = true;
  // The last long-polls end with the heartbeat (or the server's stop): not awaited.
  void Promise.all(polls);
  const ids = [...sentAt.keys()];
  let lost = 0;
  let duplicated = 0;
  let disordered = 0;
  for (const [i, list] of received.entries()) {
    const seen = new Set(list);
    duplicated += list.length - seen.size;
    lost += ids.filter((id) => !seen.has(id)).length;
    // Zulip's contract: a queue's event ids increase.
    const order = eventIds[i] ?? [];
    for (let k = 1; k < order.length; k++)
      if ((order[k] ?? 0) <= (order[k - 1] ?? 0)) disordered += 1;
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
    answers,
    sample,
  };
}

async function main(): Promise<void> {
  process.stdout.write(`filling a database with ${String(MAX_USERS)} listeners...\n`);
  const data = await createLoadRealm("chat_realtime", MAX_USERS, 1, () => [0]);
  const channel = data.channels[0] ?? 0;
  const outcomes: Outcome[] = [];
  let ceiling: { ours: Outcome; bare: Outcome } | undefined;
  try {
    for (const scenario of SCENARIOS) {
      const servers = await startReplicas(data.url, scenario.replicas);
      try {
        const outcome = await run(
          scenario,
          servers.map((s) => s.port),
          data.users,
          channel,
        );
        outcomes.push(outcome);
        process.stdout.write(
          `${JSON.stringify({ scenario, errors: outcome.errors, lost: outcome.lost, duplicated: outcome.duplicated, disordered: outcome.disordered, failures: outcome.failures })}\n`,
        );
      } finally {
        for (const server of servers) await server.stop();
      }
    }
    // The ceiling: a bare node:http server answering the same long-polls from
    // memory with the same bytes, under the same load (one sender at a time).
    const single = outcomes
      .filter(
        (o) => o.scenario.senders === 1 && o.scenario.replicas === 1 && o.sample !== undefined,
      )
      .sort((x, y) => y.scenario.users - x.scenario.users)[0];
    if (single !== undefined) {
      const port = await freePort();
      const reference = await serve("node", [...TS, join(__dirname, "poll-reference.ts")], port, {
        PORT: String(port),
        BENCH_EVENT: single.sample ?? "{}",
      });
      try {
        ceiling = {
          ours: single,
          bare: await run(single.scenario, [port], data.users, channel),
        };
      } finally {
        await reference.stop();
      }
    }
  } finally {
    await agent.close();
    await data.drop();
  }
  const ms = (v: number) => `${v.toFixed(0)} ms`;
  const sorted = (v: number[]) => [...v].sort((x, y) => x - y);
  const rows = outcomes.map((o) => {
    const send = sorted(o.sendMs);
    const delivery = sorted(o.deliveryMs);
    const messages = o.scenario.senders * o.scenario.perSender;
    return [
      String(o.scenario.replicas),
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
    ];
  });
  const markdown = [
    "## chat-api: real-time delivery (issue 25)",
    "",
    `N users, each with one event queue long-polling \`GET /events\` (\`event_types=["message"]\`), all subscribed to one channel; senders post to it (each sender one message after the other, the senders at once). chat-api in production mode on PostgreSQL (rate limit off), one replica or two on the same database (listeners and senders spread over them); the load in one process over loopback. Delivery is timed from the start of the send. Every queue's events are checked. ${machine([])}.`,
    "",
    table(
      [
        "replicas",
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
      ],
      rows,
    ),
    ...(ceiling === undefined
      ? []
      : [
          "",
          (() => {
            const rate = (o: Outcome) => o.answers / o.deliverySeconds;
            const { ours, bare } = ceiling;
            return `Poll answers carrying a message, ${ours.scenario.users.toLocaleString("en-US")} long-polls, one sender at a time: chat-api ${rate(ours).toFixed(0)}/s; a bare \`node:http\` server holding the same polls and answering them from memory with the same bytes (bench/poll-reference.ts), same load in the same run: ${rate(bare).toFixed(0)}/s (its send p50 ${quantile(
              [...bare.sendMs].sort((x, y) => x - y),
              0.5,
            ).toFixed(1)} ms): **${(rate(ours) / rate(bare)).toFixed(2)}x** the ceiling.`;
          })(),
        ]),
  ].join("\n");
  if (CHOSEN === undefined) writeSection(DOCS, "chat-realtime", markdown);
  process.stdout.write(`${markdown}\n`);
}

void main().catch((error: unknown) => {
  process.stderr.write(`${String(error)}\n`);
  process.exit(1);
});
