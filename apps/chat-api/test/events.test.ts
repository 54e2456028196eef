import { setTimeout as sleep } from "node:timers/promises";
import { collectIdleQueues } from "../src/realtime/queue";
import { type TestDatabase, freshDatabase } from "./support/database";
import { type Cast, type TestServer, apiError, loadCast, startTestServer } from "./support/server";
import { REGISTER_STATE_TYPES, registerSchema, zulipResponseSchema } from "./support/zulip-schema";

const validateRegister = registerSchema(REGISTER_STATE_TYPES);
const validateSnippetsOnly = registerSchema(["saved_snippets"]);
const validateEvents = zulipResponseSchema("companions", "/events", "get");

/**
 * Two app instances on one database stand for two replicas (on PostgreSQL
 * each has its own pool and LISTEN connection; PGlite is one connection per
 * process, so there they share it).
 */
let db: TestDatabase;
let a: TestServer;
let b: TestServer;
let cast: Cast;

beforeAll(async () => {
  db = await freshDatabase("seeded");
  a = await startTestServer({ db, env: { CHAT_EVENT_HEARTBEAT_SECONDS: "1" } });
  const second = (await db.replica?.()) ?? { ...db, close: () => Promise.resolve() };
  b = await startTestServer({
    db: second,
    env: { CHAT_EVENT_HEARTBEAT_SECONDS: "1" },
  });
  cast = await loadCast(a, ["hamlet", "othello", "iago"]);
});

afterAll(async () => {
  await b.close();
  await a.close();
  await db.close();
});

const as = (who: string) => cast.as(who);
const draft = (content: string) => ({ type: "", to: [], topic: "", content });

async function register(
  server: TestServer,
  who: string,
  form: Record<string, unknown> = {},
): Promise<string> {
  const reply = await server.call("POST", "/api/v1/register", { ...as(who), form });
  expect(reply.status).toBe(200);
  return reply.body.queue_id as string;
}

function poll(server: TestServer, who: string, query: Record<string, unknown>) {
  return server.call("GET", "/api/v1/events", { ...as(who), query });
}

describe("POST /api/v1/register", () => {
  it("creates a queue and answers the state of every type this server has", async () => {
    await a.call("POST", "/api/v1/drafts", {
      ...as("hamlet"),
      form: { drafts: [draft("Words, words, words")] },
    });
    const reply = await a.call("POST", "/api/v1/register", as("hamlet"));
    expect(reply.status).toBe(200);
    expect(validateRegister(reply.body)).toEqual([]);
    expect(reply.body).toMatchObject({
      last_event_id: -1,
      chat_feature_level: 496,
      zulip_feature_level: 496,
      max_stream_name_length: 60,
      max_stream_description_length: 1024,
      max_topic_length: 60,
      saved_snippets: [],
      user_topics: [],
    });
    expect(typeof reply.body.queue_id).toBe("string");
    expect((reply.body.drafts as { content: string }[]).map((d) => d.content)).toEqual([
      "Words, words, words",
    ]);
    expect((reply.body.realm_linkifiers as unknown[]).length).toBe(2);
    expect((reply.body.custom_profile_fields as unknown[]).length).toBe(3);
    expect(Object.keys(reply.body)).toEqual(
      expect.arrayContaining(["presences", "server_timestamp", "realm_user_groups"]),
    );
  });

  it("fetches only the state asked for", async () => {
    const reply = await a.call("POST", "/api/v1/register", {
      ...as("hamlet"),
      form: { event_types: ["saved_snippets"] },
    });
    expect(validateSnippetsOnly(reply.body)).toEqual([]);
    expect(reply.body.saved_snippets).toEqual([]);
    expect(reply.body).not.toHaveProperty("drafts");
    expect(reply.body).not.toHaveProperty("realm_linkifiers");
  });

  it("refuses a malformed event_types", async () => {
    const reply = await a.call("POST", "/api/v1/register", {
      ...as("hamlet"),
      form: { event_types: "drafts" },
    });
    expect([reply.status, reply.body]).toEqual([400, apiError("event_types is not valid JSON")]);
  });
});

describe("GET /api/v1/events", () => {
  it("answers at once with dont_block, and with the events of the queue's types", async () => {
    const queue = await register(a, "hamlet", { event_types: ["drafts"] });
    const empty = await poll(a, "hamlet", { queue_id: queue, last_event_id: -1, dont_block: true });
    expect(validateEvents(empty.body)).toEqual([]);
    expect(empty.body).toEqual({ result: "success", msg: "", events: [], queue_id: queue });
    await a.call("POST", "/api/v1/saved_snippets", {
      ...as("hamlet"),
      form: { title: "Hi", content: "Hello" },
    });
    const created = await a.call("POST", "/api/v1/drafts", {
      ...as("hamlet"),
      form: { drafts: [draft("To be")] },
    });
    const [draftId] = created.body.ids as number[];
    const reply = await poll(a, "hamlet", { queue_id: queue, last_event_id: -1, dont_block: true });
    expect(validateEvents(reply.body)).toEqual([]);
    const events = reply.body.events as { id: number }[];
    // Ids increase in a queue (Zulip's contract), numbered from the event log.
    expect(events[0]?.id).toBeGreaterThan(0);
    expect(events.map(({ id: _id, ...event }) => event)).toEqual([
      {
        type: "drafts",
        op: "add",
        drafts: [
          {
            id: draftId,
            type: "",
            to: [],
            topic: "",
            content: "To be",
            timestamp: expect.any(Number) as number,
          },
        ],
      },
    ]);
  });

  it("keeps one set of event types and one shape for the queues that asked for the same", async () => {
    const first = await register(a, "hamlet", {
      event_types: ["drafts", "saved_snippets"],
      apply_markdown: true,
    });
    const same = await register(a, "othello", {
      event_types: ["saved_snippets", "drafts", "drafts"],
      apply_markdown: true,
    });
    const other = await register(a, "iago", { event_types: ["drafts"] });
    const queues = a.services.events.queues;
    const [q1, q2, q3] = [first, same, other].map((id) => queues.known(id));
    expect(q1?.types).toEqual(new Set(["drafts", "saved_snippets"]));
    expect(q2?.types).toBe(q1?.types);
    expect(q3?.types).toEqual(new Set(["drafts"]));
    expect(q3?.types).not.toBe(q1?.types);
    expect(q2?.shape).toBe(q1?.shape);
    expect(q1?.shape).toMatchObject({ apply_markdown: true });
    expect(q3?.shape).toMatchObject({ apply_markdown: false });
    // What a held poll's queue keeps: its id, user, acknowledgement, types and shape, no more.
    expect(Object.keys(q1 ?? {}).sort()).toEqual(
      ["id", "last_event_id", "shape", "types", "user_id"].sort(),
    );
    // Each still receives what it asked for.
    await a.call("POST", "/api/v1/saved_snippets", {
      ...as("othello"),
      form: { title: "Mine", content: "Only mine" },
    });
    const reply = await poll(a, "othello", { queue_id: same, last_event_id: -1, dont_block: true });
    expect((reply.body.events as { type: string }[]).map((e) => e.type)).toEqual([
      "saved_snippets",
    ]);
    const none = await poll(a, "iago", { queue_id: other, last_event_id: -1, dont_block: true });
    expect(none.body.events).toEqual([]);
  });

  it("wakes a waiting poll when the user's other client edits a draft (within 5 s)", async () => {
    const created = await a.call("POST", "/api/v1/drafts", {
      ...as("othello"),
      form: { drafts: [draft("First")] },
    });
    const [draftId] = created.body.ids as number[];
    const queue = await register(a, "othello", { event_types: ["drafts"] });
    const started = Date.now();
    const waiting = poll(a, "othello", { queue_id: queue, last_event_id: -1 });
    await sleep(100);
    const edit = await a.call("PATCH", `/api/v1/drafts/${String(draftId)}`, {
      ...as("othello"),
      form: { draft: draft("Second") },
    });
    expect(edit.status).toBe(200);
    const reply = await waiting;
    expect(Date.now() - started).toBeLessThan(5000);
    expect(validateEvents(reply.body)).toEqual([]);
    expect(reply.body.events).toMatchObject([
      { type: "drafts", op: "update", draft: { id: draftId, content: "Second" } },
    ]);
  });

  it("wakes a poll on one replica when the other replica writes the event", async () => {
    const queue = await register(b, "iago", { event_types: ["saved_snippets"] });
    const waiting = poll(b, "iago", { queue_id: queue, last_event_id: -1 });
    await sleep(100);
    const started = Date.now();
    const created = await a.call("POST", "/api/v1/saved_snippets", {
      ...as("iago"),
      form: { title: "Aside", content: "I am not what I am." },
    });
    expect(created.status).toBe(200);
    const reply = await waiting;
    expect(Date.now() - started).toBeLessThan(5000);
    expect(validateEvents(reply.body)).toEqual([]);
    expect(reply.body.events).toMatchObject([
      {
        type: "saved_snippets",
        op: "add",
        saved_snippet: { id: created.body.saved_snippet_id, title: "Aside" },
      },
    ]);
  });

  it("answers a heartbeat after the idle time, numbered in the queue", async () => {
    const queue = await register(a, "iago", { event_types: ["drafts"] });
    const reply = await poll(a, "iago", { queue_id: queue, last_event_id: -1 });
    expect(validateEvents(reply.body)).toEqual([]);
    const [heartbeat] = reply.body.events as { type: string; id: number }[];
    expect(heartbeat?.type).toBe("heartbeat");
    // Acknowledging the heartbeat, the next poll's heartbeat is numbered after it.
    const next = await poll(a, "iago", { queue_id: queue, last_event_id: heartbeat?.id });
    const [second] = next.body.events as { type: string; id: number }[];
    expect([second?.type, (second?.id ?? 0) > (heartbeat?.id ?? Infinity)]).toEqual([
      "heartbeat",
      true,
    ]);
  });

  it("counts an acknowledgement past every event up to the last one", async () => {
    const queue = await register(a, "iago", { event_types: ["saved_snippets"] });
    // A billion ids ahead: the heartbeat comes after one idle time, not a billion appends.
    const reply = await poll(a, "iago", { queue_id: queue, last_event_id: 1_000_000_000 });
    const [heartbeat] = reply.body.events as { type: string; id: number }[];
    expect(heartbeat?.type).toBe("heartbeat");
    expect(heartbeat?.id).toBeLessThan(1_000_000_000);
    // And the queue still receives what comes next.
    await a.call("POST", "/api/v1/saved_snippets", {
      ...as("iago"),
      form: { title: "After", content: "After" },
    });
    const next = await poll(a, "iago", { queue_id: queue, last_event_id: heartbeat?.id });
    expect(next.body.events).toMatchObject([
      { type: "saved_snippets", op: "add", saved_snippet: { title: "After" } },
    ]);
  });

  it("discards the events acknowledged by last_event_id", async () => {
    const queue = await register(a, "hamlet", { event_types: ["saved_snippets"] });
    for (const title of ["One", "Two"]) {
      await a.call("POST", "/api/v1/saved_snippets", {
        ...as("hamlet"),
        form: { title, content: title },
      });
    }
    const first = await poll(a, "hamlet", { queue_id: queue, dont_block: true });
    const ids = (first.body.events as { id: number }[]).map((e) => e.id);
    expect(ids).toHaveLength(2);
    expect(ids[1]).toBeGreaterThan(ids[0] ?? Infinity);
    const second = await poll(a, "hamlet", {
      queue_id: queue,
      last_event_id: ids[0],
      dont_block: true,
    });
    expect((second.body.events as { id: number }[]).map((e) => e.id)).toEqual([ids[1]]);
    // The acknowledgement holds for later polls that give none.
    const third = await poll(a, "hamlet", { queue_id: queue, dont_block: true });
    expect((third.body.events as { id: number }[]).map((e) => e.id)).toEqual([ids[1]]);
  });
});

describe("DELETE /api/v1/events and queue collection", () => {
  it("deletes a queue; then polling and deleting it again are BAD_EVENT_QUEUE_ID", async () => {
    const queue = await register(a, "hamlet");
    const deleted = await a.call("DELETE", "/api/v1/events", {
      ...as("hamlet"),
      form: { queue_id: queue },
    });
    expect(deleted.body).toEqual({ result: "success", msg: "" });
    const bad = {
      result: "error",
      msg: `Bad event queue ID: ${queue}`,
      code: "BAD_EVENT_QUEUE_ID",
      queue_id: queue,
    };
    const again = await a.call("DELETE", "/api/v1/events", {
      ...as("hamlet"),
      form: { queue_id: queue },
    });
    expect([again.status, again.body]).toEqual([400, bad]);
    const polled = await poll(a, "hamlet", { queue_id: queue, dont_block: true });
    expect([polled.status, polled.body]).toEqual([400, bad]);
  });

  it("does not let one user poll or delete another's queue", async () => {
    const queue = await register(a, "hamlet");
    const foreign = await a.call("DELETE", "/api/v1/events", {
      ...as("othello"),
      form: { queue_id: queue },
    });
    expect(foreign.body.code).toBe("BAD_EVENT_QUEUE_ID");
    expect((await poll(a, "othello", { queue_id: queue, dont_block: true })).body.code).toBe(
      "BAD_EVENT_QUEUE_ID",
    );
    expect(await db.prisma.eventQueue.count({ where: { id: queue } })).toBe(1);
  });

  it("collects queues idle for the timeout", async () => {
    const idle = await register(a, "hamlet");
    const fresh = await register(a, "hamlet");
    await db.prisma.eventQueue.update({
      where: { id: idle },
      data: { last_poll_time: new Date(Date.now() - 11 * 60_000) },
    });
    expect(await collectIdleQueues(db, 10 * 60_000)).toBeGreaterThanOrEqual(1);
    expect((await poll(a, "hamlet", { queue_id: idle, dont_block: true })).body.code).toBe(
      "BAD_EVENT_QUEUE_ID",
    );
    expect((await poll(a, "hamlet", { queue_id: fresh, dont_block: true })).status).toBe(200);
  });
});

describe("a change and its events are one transaction", () => {
  it("when the event cannot be written, the change is not made either", async () => {
    const queue = await register(a, "othello", { event_types: ["saved_snippets"] });
    const before = await db.prisma.savedSnippet.count();
    await db.sql.exec(`
      CREATE FUNCTION refuse_event() RETURNS trigger LANGUAGE plpgsql AS
        $$ BEGIN RAISE EXCEPTION 'no events today'; END $$;
      CREATE TRIGGER refuse_event BEFORE INSERT ON event_log FOR EACH ROW EXECUTE FUNCTION refuse_event();`);
    try {
      const reply = await a.call("POST", "/api/v1/saved_snippets", {
        ...as("othello"),
        form: { title: "Lost", content: "Never stored" },
      });
      expect(reply.status).toBe(500);
    } finally {
      await db.sql.exec(`DROP TRIGGER refuse_event ON event_log; DROP FUNCTION refuse_event();`);
    }
    expect(await db.prisma.savedSnippet.count()).toBe(before);
    const events = await poll(a, "othello", { queue_id: queue, dont_block: true });
    expect(events.body.events).toEqual([]);
  });
});
