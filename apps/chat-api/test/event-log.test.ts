import { setTimeout as sleep } from "node:timers/promises";
import { rm } from "node:fs/promises";
import { type Database, createDatabase } from "../src/db/database";
import pino from "pino";
import { EVENT_BATCH, appendEvents, logPosition, pruneLog } from "../src/db/queries/events";
import { EventHub } from "../src/realtime/hub";
import { sendEvent } from "../src/realtime/queue";
import { TEST_DB_KIND, type TestDatabase, freshDataDir, freshDatabase } from "./support/database";
import { type TestServer, channelIds, startTestServer } from "./support/server";
import { TEST_PGLITE_SHARED_BUFFERS } from "./support/templates";

/**
 * The event log (issue 25): events written once per change, numbered by a
 * sequencer once committed, read by every replica. Two app instances on one
 * database stand for two replicas (PostgreSQL: each with its own pool and
 * LISTEN connection; PGlite, one process: one after the other).
 */
const PEOPLE = ["desdemona", "iago", "prospero", "hamlet", "othello", "cordelia", "polonius"];

interface Person {
  email: string;
  apiKey: string;
}

interface Polled {
  id: number;
  type: string;
  message?: { id: number; content: string };
}

const auth = (p: Person) => ({ auth: [p.email, p.apiKey] as const });

async function people(server: TestServer): Promise<Record<string, Person>> {
  const out: Record<string, Person> = {};
  for (const key of PEOPLE) out[key] = await server.person(key);
  return out;
}

async function register(server: TestServer, who: Person, types: string[]): Promise<string> {
  const reply = await server.call("POST", "/api/v1/register", {
    ...auth(who),
    form: { event_types: JSON.stringify(types) },
  });
  expect(reply.status).toBe(200);
  return reply.body.queue_id as string;
}

/** Posts `content` to channel `channel`, topic `topic`, as `who`, through `server`. */
function sendToChannel(
  server: TestServer,
  who: Person,
  channel: number,
  topic: string,
  content: string,
) {
  return server.call("POST", "/api/v1/messages", {
    ...auth(who),
    form: { type: "stream", to: String(channel), topic, content },
  });
}

async function poll(
  server: TestServer,
  who: Person,
  queueId: string,
  lastEventId: number,
  dontBlock = true,
): Promise<{ status: number; code?: string; events: Polled[] }> {
  const reply = await server.call("GET", "/api/v1/events", {
    ...auth(who),
    query: {
      queue_id: queueId,
      last_event_id: String(lastEventId),
      dont_block: String(dontBlock),
    },
  });
  return {
    status: reply.status,
    code: reply.body.code as string | undefined,
    events: (reply.body.events ?? []) as Polled[],
  };
}

describe("the event log on two replicas", () => {
  let db: TestDatabase;
  let a: TestServer;
  let b: TestServer;
  let cast: Record<string, Person>;
  let denmark: number;

  beforeAll(async () => {
    db = await freshDatabase("seeded");
    const env = { CHAT_RATE_LIMIT: "off", CHAT_EVENT_HEARTBEAT_SECONDS: "2" };
    a = await startTestServer({ db, env });
    const second = (await db.replica?.()) ?? { ...db, close: () => Promise.resolve() };
    b = await startTestServer({ db: second, env });
    cast = await people(a);
    denmark = (await channelIds(a)).Denmark ?? 0;
    // Everyone in the channel the senders write to.
    for (const key of PEOPLE)
      await a.call("POST", "/api/v1/users/me/subscriptions", {
        ...auth(cast[key] as Person),
        form: { subscriptions: JSON.stringify([{ name: "Denmark" }]) },
      });
  });

  afterAll(async () => {
    await b.close();
    await a.close();
    await db.close();
  });

  it("delivers 50 concurrent senders' 200 messages to every queue once, in increasing id order", async () => {
    const listeners = PEOPLE.map((key, i) => ({
      who: cast[key] as Person,
      server: i % 2 === 0 ? a : b,
    }));
    const queues = await Promise.all(listeners.map((l) => register(l.server, l.who, ["message"])));
    const senders = Array.from({ length: 50 }, (_, i) => ({
      who: cast[PEOPLE[i % PEOPLE.length] ?? ""] as Person,
      server: i % 2 === 0 ? b : a,
      index: i,
    }));
    const statuses = await Promise.all(
      senders.map(async (s) => {
        const codes: number[] = [];
        for (let n = 0; n < 4; n++) {
          const sent = await sendToChannel(
            s.server,
            s.who,
            denmark,
            "load",
            `sender ${String(s.index)} message ${String(n)}`,
          );
          codes.push(sent.status);
        }
        return codes;
      }),
    );
    expect(statuses.flat().filter((status) => status !== 200)).toEqual([]);
    const expected = senders
      .flatMap((s) => [0, 1, 2, 3].map((n) => `sender ${String(s.index)} message ${String(n)}`))
      .sort();
    for (const [i, listener] of listeners.entries()) {
      const queue = queues[i] ?? "";
      const received: Polled[] = [];
      let last = -1;
      // Polls alternate between the replicas, acknowledging as they go.
      for (let round = 0; round < 50 && received.length < 200; round++) {
        const server = round % 2 === 0 ? a : b;
        const polled = await poll(server, listener.who, queue, last, received.length > 0);
        expect(polled.status).toBe(200);
        const messages = polled.events.filter((e) => e.type === "message");
        received.push(...messages);
        last = polled.events.at(-1)?.id ?? last;
      }
      const ids = received.map((e) => e.id);
      expect(ids).toEqual([...ids].sort((x, y) => x - y));
      expect(new Set(ids).size).toBe(ids.length);
      expect(received.map((e) => e.message?.content ?? "").sort()).toEqual(expected);
      // Nothing more: each event was delivered once.
      expect((await poll(a, listener.who, queue, last)).events).toEqual([]);
    }
  });

  it("numbers an event the same on both replicas", async () => {
    const hamlet = cast.hamlet as Person;
    const queue = await register(a, hamlet, ["message"]);
    await sendToChannel(b, cast.othello as Person, denmark, "same", "One event");
    const fromA = await poll(a, hamlet, queue, -1, false);
    const fromB = await poll(b, hamlet, queue, -1, false);
    expect(fromA.events.map((e) => [e.id, e.message?.content])).toEqual(
      fromB.events.map((e) => [e.id, e.message?.content]),
    );
    expect(fromA.events.map((e) => e.message?.content)).toEqual(["One event"]);
  });

  it("writes nothing for a poll that finds nothing; its time and acknowledgement go in a batch", async () => {
    const iago = cast.iago as Person;
    const queue = await register(a, iago, ["drafts"]);
    await a.services.events.queues.flushBookkeeping();
    const stored = () =>
      db.prisma.eventQueue.findUniqueOrThrow({
        where: { id: queue },
        select: { last_poll_time: true, last_event_id: true },
      });
    const before = await stored();
    await sleep(20);
    expect((await poll(a, iago, queue, -1)).events).toEqual([]);
    expect(await stored()).toEqual(before);
    await a.services.events.queues.flushBookkeeping();
    expect((await stored()).last_poll_time.getTime()).toBeGreaterThan(
      before.last_poll_time.getTime(),
    );
  });

  it("tells a queue whose unacknowledged events were pruned to register again", async () => {
    const hamlet = cast.hamlet as Person;
    const queue = await register(b, hamlet, ["message"]);
    await sendToChannel(a, cast.othello as Person, denmark, "pruned", "Soon gone");
    await poll(b, hamlet, queue, -1, false);
    // Everything older than a second from now is pruned, read or not.
    await db.transaction((tx) => pruneLog(tx, new Date(Date.now() + 1000)));
    await b.services.events.catchUp();
    expect((await poll(b, hamlet, queue, -1)).code).toBe("BAD_EVENT_QUEUE_ID");
  });
});

describe("a replica's restart", () => {
  let opened: Database[] = [];
  let open: () => Promise<Database>;
  let cleanup: () => Promise<void>;

  beforeAll(async () => {
    if (TEST_DB_KIND === "postgres") {
      const base = await freshDatabase("seeded");
      open = async () => {
        const replica = base.replica;
        if (replica === undefined) throw new Error("PostgreSQL databases have replicas");
        return replica();
      };
      cleanup = () => base.close();
    } else {
      // PGlite: the same data directory, opened again after the first closed it.
      const dataDir = await freshDataDir("seeded");
      open = () =>
        createDatabase({ kind: "pglite", dataDir, sharedBuffers: TEST_PGLITE_SHARED_BUFFERS });
      cleanup = () => rm(dataDir, { recursive: true, force: true });
    }
  });

  afterAll(async () => {
    for (const db of opened) await db.close().catch(() => undefined);
    opened = [];
    await cleanup();
  });

  const start = async (): Promise<TestServer> => {
    const db = await open();
    opened.push(db);
    return startTestServer({
      db: { ...db, close: () => db.close() },
      env: { CHAT_RATE_LIMIT: "off" },
    });
  };

  it("keeps its queues: the events sent before and during the restart arrive after it", async () => {
    const first = await start();
    const hamlet = await first.person("hamlet");
    const othello = await first.person("othello");
    const denmark = (await channelIds(first)).Denmark ?? 0;
    const send = (server: TestServer, content: string) =>
      sendToChannel(server, othello, denmark, "restart", content);
    await first.call("POST", "/api/v1/users/me/subscriptions", {
      ...auth(hamlet),
      form: { subscriptions: JSON.stringify([{ name: "Denmark" }]) },
    });
    const queue = await register(first, hamlet, ["message"]);
    expect((await send(first, "Before")).status).toBe(200);
    const early = await poll(first, hamlet, queue, -1, false);
    expect(early.events.map((e) => e.message?.content)).toEqual(["Before"]);
    const acknowledged = early.events.at(-1)?.id ?? -1;
    expect((await send(first, "Unread at the stop")).status).toBe(200);
    await first.close();

    const second = await start();
    expect((await send(second, "After")).status).toBe(200);
    const later = await poll(second, hamlet, queue, acknowledged, false);
    const contents: string[] = later.events.map((e) => e.message?.content ?? "");
    if (contents.length < 2) {
      const more = await poll(second, hamlet, queue, later.events.at(-1)?.id ?? acknowledged);
      contents.push(...more.events.map((e) => e.message?.content ?? ""));
    }
    expect(contents).toEqual(["Unread at the stop", "After"]);
    await second.close();
  });
});

describe("a request's wait for its events (EventHub.settle)", () => {
  let db: TestDatabase;
  const quiet = pino({ level: "silent" });
  const write = (count: number, userId: number) =>
    db.transaction((tx) =>
      appendEvents(
        tx,
        Array.from({ length: count }, (_, i) => ({
          userIds: [userId],
          type: "drafts",
          payload: JSON.stringify({ type: "drafts", op: "remove", draft_id: i }),
          span: 1,
        })),
      ),
    );

  beforeAll(async () => {
    db = await freshDatabase("migrated");
  });

  afterAll(async () => {
    await db.close();
  });

  it("returns once this replica holds them, when another replica's round numbered them", async () => {
    // Neither hub listens: the other replica's NOTIFY never comes, as when it is late.
    const here = new EventHub(db, quiet);
    const there = new EventHub(db, quiet);
    await write(1, 7);
    await there.settle();
    const { last } = await logPosition(db);
    expect(there.position).toBe(last);
    await here.settle();
    expect(here.position).toBe(last);
    expect(here.held(7, last - 1)?.map((event) => event.seq)).toEqual([last]);
  });

  it("makes a transaction that wrote events return once the replica holds them, and no other wait", async () => {
    const hub = new EventHub(db, quiet);
    await hub.start();
    let reads = 0;
    const stopCounting = db.onEvents(() => {
      reads++;
      return Promise.resolve();
    });
    try {
      const before = hub.position;
      const draft = { type: "drafts", op: "remove", draft_id: 1 };
      await db.transaction((tx) => sendEvent(tx, [9], draft));
      // No NOTIFY has been awaited: the transaction itself waited for the replica.
      expect(hub.held(9, before)?.map((event) => event.event_type)).toEqual(["drafts"]);
      const afterOne = hub.position;
      // A statement outside a transaction waits the same way.
      await sendEvent(db, [9], { ...draft, draft_id: 2 });
      expect(hub.held(9, afterOne)?.map((event) => event.event_type)).toEqual(["drafts"]);
      expect(reads).toBe(2);
      // Without events, a transaction waits for nothing.
      await db.transaction((tx) => tx.q.selectFrom("realms").select("id").execute());
      await db.transaction((tx) => sendEvent(tx, [], draft));
      expect(reads).toBe(2);
      // A reader that fails does not turn a committed write into an error.
      const stopFailing = db.onEvents(() => Promise.reject(new Error("no numbering round")));
      try {
        await expect(
          db.transaction(async (tx) => {
            await sendEvent(tx, [9], { ...draft, draft_id: 3 });
            return "committed";
          }),
        ).resolves.toBe("committed");
      } finally {
        stopFailing();
      }
      expect(reads).toBe(3);
    } finally {
      stopCounting();
      await hub.stop();
    }
  });

  it("numbers every event written before it, beyond one round's batch", async () => {
    const hub = new EventHub(db, quiet);
    const before = (await logPosition(db)).last;
    await hub.settle();
    await write(EVENT_BATCH + 3, 8);
    await hub.settle();
    expect(hub.position).toBe(before + EVENT_BATCH + 3);
    expect((await logPosition(db)).last).toBe(before + EVENT_BATCH + 3);
  });
});
