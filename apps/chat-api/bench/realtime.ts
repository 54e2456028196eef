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
import {
  type Served,
  freePort,
  machine,
  quantile,
  serve,
  table,
  writeSection,
} from "@repo/bench-kit";
import { Client } from "pg";
import { createSeededDatabase } from "./dataset";
import { Agent, request } from "undici";

const ADMIN_URL = process.env.BENCH_DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";
const DOCS = join(__dirname, "../../../docs/benchmarks.md");
const EXTERNAL_URL = "http://localhost:9991";
const MAX_USERS = 1000;
const TS = ["--conditions=@repo/source", "--require", "@swc-node/register"];
/** BENCH_CPU_PROF=DIR: each chat-api process writes a V8 CPU profile there when it stops. */
const CPU_PROF = process.env.BENCH_CPU_PROF;

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

interface User {
  id: number;
  email: string;
  apiKey: string;
}

/** A database of its own: the demo realm (seeded by the service) and MAX_USERS users in channel "load". */
async function createDatabase(): Promise<{
  url: string;
  users: User[];
  channel: number;
  drop(): Promise<void>;
}> {
  const { url, drop } = await createSeededDatabase(ADMIN_URL, "chat_realtime");
  const db = new Client({ connectionString: url });
  await db.connect();
  try {
    const q = async <T extends Record<string, unknown>>(text: string, params: unknown[] = []) =>
      (await db.query<T>(text, params)).rows;
    const [realm] = await q<{ realm_id: number; group: number }>(
      `SELECT u.realm_id, g.id AS group FROM users u
       JOIN user_groups g ON g.realm_id = u.realm_id AND g.name = 'role:fullmembers'
       WHERE u.email = 'hamlet@example.com'`,
    );
    if (realm === undefined) throw new Error("the demo realm changed");
    const users = await q<{ id: number; email: string; api_key: string }>(
      `INSERT INTO users (realm_id, email, delivery_email, full_name, api_key)
       SELECT $1, 'rt' || n || '@example.com', 'rt' || n || '@example.com', 'Listener ' || n,
              substr(md5('realtime-key-' || n), 1, 32)
       FROM generate_series(1, $2::int) AS n
       RETURNING id, email, api_key`,
      [realm.realm_id, MAX_USERS],
    );
    await q("INSERT INTO user_group_members (group_id, user_id) SELECT $1, unnest($2::int[])", [
      realm.group,
      users.map((u) => u.id),
    ]);
    const [channel] = await q<{ id: number }>(
      `INSERT INTO channels (realm_id, name, description, rendered_description,
         can_add_subscribers_group_id, can_administer_channel_group_id, can_delete_any_message_group_id,
         can_delete_own_message_group_id, can_move_messages_out_of_channel_group_id,
         can_move_messages_within_channel_group_id, can_remove_subscribers_group_id,
         can_resolve_topics_group_id, can_send_message_group_id, can_subscribe_group_id,
         can_create_topic_group_id)
       SELECT realm_id, 'load', 'The load', '<p>The load</p>',
         can_add_subscribers_group_id, can_administer_channel_group_id, can_delete_any_message_group_id,
         can_delete_own_message_group_id, can_move_messages_out_of_channel_group_id,
         can_move_messages_within_channel_group_id, can_remove_subscribers_group_id,
         can_resolve_topics_group_id, can_send_message_group_id, can_subscribe_group_id,
         can_create_topic_group_id
       FROM channels WHERE realm_id = $1 AND name = 'Denmark' RETURNING id`,
      [realm.realm_id],
    );
    if (channel === undefined) throw new Error("could not create the channel");
    await q(
      `INSERT INTO subscriptions (user_id, channel_id, color)
       SELECT unnest($1::int[]), $2, '#76ce90'`,
      [users.map((u) => u.id), channel.id],
    );
    await q("ANALYZE");
    return {
      url,
      users: users.map((u) => ({ id: u.id, email: u.email, apiKey: u.api_key })),
      channel: channel.id,
      drop,
    };
  } finally {
    await db.end();
  }
}

/** What a request that got no answer (a connection error) counts as. */
const NO_ANSWER: { status: number; json: Record<string, unknown> } = { status: 0, json: {} };

const agent = new Agent({ connections: 4096, pipelining: 0, keepAliveTimeout: 120_000 });

async function call(
  port: number,
  user: User,
  method: "GET" | "POST",
  path: string,
  form: Record<string, string>,
): Promise<{ status: number; json: Record<string, unknown> }> {
  const body = new URLSearchParams(form).toString();
  const response = await request(
    `http://127.0.0.1:${String(port)}/api/v1${path}${method === "GET" ? `?${body}` : ""}`,
    {
      method,
      dispatcher: agent,
      headers: {
        host: "localhost",
        authorization: `Basic ${Buffer.from(`${user.email}:${user.apiKey}`).toString("base64")}`,
        ...(method === "POST" ? { "content-type": "application/x-www-form-urlencoded" } : {}),
      },
      ...(method === "POST" ? { body } : {}),
    },
  );
  return {
    status: response.statusCode,
    json: (await response.body.json()) as Record<string, unknown>,
  };
}

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
  const data = await createDatabase();
  const outcomes: Outcome[] = [];
  let ceiling: { ours: Outcome; bare: Outcome } | undefined;
  try {
    for (const scenario of SCENARIOS) {
      const servers: Served[] = [];
      for (let r = 0; r < scenario.replicas; r++) {
        const port = await freePort();
        const profile = CPU_PROF === undefined ? [] : ["--cpu-prof", `--cpu-prof-dir=${CPU_PROF}`];
        servers.push(
          await serve("node", [...profile, join(__dirname, "../dist/index.js")], port, {
            DATABASE_URL: data.url,
            NODE_ENV: "production",
            PORT: String(port),
            CHAT_HOST: "127.0.0.1",
            CHAT_METRICS_PORT: String(await freePort()),
            CHAT_EXTERNAL_URL: EXTERNAL_URL,
            CHAT_RATE_LIMIT: "false",
            CHAT_MAX_POLLS_PER_USER: "100",
          }),
        );
      }
      try {
        const outcome = await run(
          scenario,
          servers.map((s) => s.port),
          data.users,
          data.channel,
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
          bare: await run(single.scenario, [port], data.users, data.channel),
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
