import { type TestDatabase, freshDatabase } from "./support/database";
import {
  apiError,
  type Cast,
  channelIds,
  channelMissing,
  loadCast,
  startTestServer,
  type TestServer,
} from "./support/server";
import { zulipResponseSchema } from "./support/zulip-schema";

const validateSend = zulipResponseSchema("companions", "/messages", "post");
const validateGet = zulipResponseSchema("companions", "/messages", "get");
const validateMarkRead = zulipResponseSchema("subset", "/mark_all_as_read", "post");

let db: TestDatabase;
let server: TestServer;
/** The same database with a 1 ms mark-as-read budget. */
let hasty: TestServer;
let cast: Cast;
let channels: Record<string, number>;

beforeAll(async () => {
  db = await freshDatabase("seeded");
  server = await startTestServer({ db });
  const second = (await db.replica?.()) ?? { ...db, close: () => Promise.resolve() };
  hasty = await startTestServer({
    db: second,
    env: { CHAT_MARK_READ_BUDGET_MS: "1" },
  });
  cast = await loadCast(server, ["iago", "hamlet", "othello", "cordelia", "polonius"]);
  channels = await channelIds(server);
});

afterAll(async () => {
  await hasty.close();
  await server.close();
  await db.close();
});

const as = (who: string) => cast.as(who);
const id = (who: string) => cast.id(who);
const send = (who: string, form: Record<string, unknown>) =>
  server.call("POST", "/api/v1/messages", { ...as(who), form });

describe("POST /api/v1/messages", () => {
  it("sends a channel message, unread for the other subscribers, read for the sender", async () => {
    const reply = await send("hamlet", {
      type: "stream",
      to: channels.Denmark,
      topic: "castle",
      content: "Something is <rotten>  ",
    });
    expect(validateSend(reply.body)).toEqual([]);
    const messageId = reply.body.id as number;
    const message = await db.prisma.message.findUniqueOrThrow({ where: { id: messageId } });
    expect([message.content, message.rendered_content, message.topic]).toEqual([
      "Something is <rotten>",
      "<p>Something is &lt;rotten&gt;</p>",
      "castle",
    ]);
    const rows = await db.prisma.userMessage.findMany({ where: { message_id: messageId } });
    const flags = new Map(rows.map((m) => [m.user_id, m.flags]));
    expect(flags.size).toBe(7);
    expect([flags.get(id("hamlet")), flags.get(id("othello"))]).toEqual([1n, 0n]);
  });

  it("sends a direct message by ids or emails", async () => {
    const byId = await send("othello", { type: "direct", to: [id("cordelia")], content: "Hello" });
    const byEmail = await send("othello", {
      type: "private",
      to: "cordelia@example.com",
      content: "Again",
    });
    for (const reply of [byId, byEmail]) {
      const message = await db.prisma.message.findUniqueOrThrow({
        where: { id: reply.body.id as number },
      });
      expect(message.channel_id).toBeNull();
      const rows = await db.prisma.userMessage.findMany({ where: { message_id: message.id } });
      expect(rows.map((m) => m.user_id).sort((a, b) => a - b)).toEqual(
        [id("othello"), id("cordelia")].sort((a, b) => a - b),
      );
    }
  });

  it("sends each recipient a message event with their flags", async () => {
    const register = async (who: string) =>
      (
        await server.call("POST", "/api/v1/register", {
          ...as(who),
          form: { event_types: ["message"], apply_markdown: true },
        })
      ).body.queue_id as string;
    const queues = { othello: await register("othello"), cordelia: await register("cordelia") };
    const sent = await send("othello", { type: "direct", to: [id("cordelia")], content: "Eyes" });
    const events = async (who: "othello" | "cordelia") =>
      (
        await server.call("GET", "/api/v1/events", {
          ...as(who),
          query: { queue_id: queues[who], dont_block: true },
        })
      ).body.events as { type: string; flags: string[]; message: Record<string, unknown> }[];
    const [mine] = await events("othello");
    const [theirs] = await events("cordelia");
    expect([mine?.type, mine?.flags, mine?.message.id]).toEqual([
      "message",
      ["read"],
      sent.body.id,
    ]);
    expect([theirs?.type, theirs?.flags]).toEqual(["message", []]);
    expect(theirs?.message).toMatchObject({
      type: "private",
      content: "<p>Eyes</p>",
      sender_id: id("othello"),
    });
  });

  it.each([
    [{ type: "stream", to: 999999, topic: "t", content: "c" }, channelMissing(999999)],
    [{ type: "stream", to: "Atlantis", topic: "t", content: "c" }, channelMissing("Atlantis")],
    [{ type: "stream", to: "Denmark", topic: "t", content: "  " }, "Message must not be empty"],
    [
      { type: "stream", to: "Denmark", topic: "t", content: "a\u0000" },
      "Message must not contain null bytes",
    ],
    [
      { type: "stream", to: "Denmark", topic: "a\u0000", content: "c" },
      "Topic must not contain null bytes",
    ],
    [{ type: "direct", to: [999999], content: "c" }, "Invalid user ID 999999"],
    [
      { type: "direct", to: "nobody@example.com", content: "c" },
      "Invalid email 'nobody@example.com'",
    ],
    [{ type: "direct", to: "[1,", content: "c" }, "to is not valid JSON"],
    [{ type: "email", to: "x", content: "c" }, "Invalid type"],
  ])("refuses %j: %j", async (form, msg) => {
    const before = await db.prisma.message.count();
    const reply = await send("othello", form);
    expect([reply.status, reply.body]).toEqual([
      400,
      typeof msg === "string" ? apiError(msg) : msg,
    ]);
    expect(await db.prisma.message.count()).toBe(before);
  });

  it("answers a private channel the sender cannot see as one that does not exist", async () => {
    const hidden = await send("othello", {
      type: "stream",
      to: channels["core team"],
      topic: "t",
      content: "c",
    });
    expect(hidden.body).toEqual(channelMissing(channels["core team"] ?? 0));
    const byName = await send("othello", {
      type: "stream",
      to: "core team",
      topic: "t",
      content: "c",
    });
    expect(byName.body).toEqual(channelMissing("core team"));
    const unknown = await send("othello", {
      type: "stream",
      to: "no such team",
      topic: "t",
      content: "c",
    });
    expect(unknown.body).toEqual(channelMissing("no such team"));
  });

  it("refuses ids past int32 and NUL in 'to' with 400, not 500", async () => {
    for (const [type, to, msg] of [
      ["stream", "2147483648", "Invalid channel in 'to'"],
      ["direct", "99999999999", "Invalid user ID or email in 'to'"],
      ["direct", "[2147483648]", "Invalid user ID or email in 'to'"],
      ["direct", "a\u0000@example.com", "to must not contain null bytes"],
      ["stream", "Ver\u0000ona", "to must not contain null bytes"],
    ] as const) {
      const reply = await send("othello", { type, to, topic: "t", content: "c" });
      expect([reply.status, reply.body]).toEqual([400, apiError(msg)]);
    }
  });

  it("looks up direct-message recipients once each, however often they are named", async () => {
    const to = JSON.stringify(Array.from({ length: 20_000 }, () => id("hamlet")));
    const reply = await send("othello", { type: "direct", to, content: "once" });
    expect(reply.status).toBe(200);
    const many = JSON.stringify(Array.from({ length: 1001 }, (_, i) => 100_000 + i));
    expect((await send("othello", { type: "direct", to: many, content: "c" })).body).toEqual(
      apiError("Too many users (limit: 1000)"),
    );
  });
});

describe("GET /api/v1/messages", () => {
  it("reads around an anchor with counts, with the caller's flags", async () => {
    const newest = await server.call("GET", "/api/v1/messages", {
      ...as("othello"),
      query: { anchor: "newest", num_before: 3, num_after: 0 },
    });
    expect(newest.status).toBe(200);
    expect(validateGet(newest.body)).toEqual([]);
    const messages = newest.body.messages as { id: number; flags: string[]; type: string }[];
    expect(messages).toHaveLength(3);
    expect(newest.body).toMatchObject({ found_newest: true, found_oldest: false });
    const ids = messages.map((m) => m.id);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    const middle = ids[1] ?? 0;
    const around = await server.call("GET", "/api/v1/messages", {
      ...as("othello"),
      query: { anchor: middle, num_before: 1, num_after: 1 },
    });
    expect((around.body.messages as { id: number }[]).map((m) => m.id)).toEqual(ids);
    expect(around.body).toMatchObject({ anchor: middle, found_anchor: true });
  });

  it("narrows by channel, topic and unread, and finds the first unread", async () => {
    const reply = await server.call("GET", "/api/v1/messages", {
      ...as("othello"),
      query: {
        anchor: "oldest",
        num_after: 100,
        narrow: [
          { operator: "channel", operand: channels.Denmark },
          { operator: "topic", operand: "castle" },
          { operator: "is", operand: "unread" },
        ],
      },
    });
    expect(validateGet(reply.body)).toEqual([]);
    const messages = reply.body.messages as {
      stream_id: number;
      subject: string;
      flags: string[];
    }[];
    expect(messages.length).toBeGreaterThan(0);
    for (const m of messages) {
      expect([m.stream_id, m.subject.toLowerCase(), m.flags]).toEqual([
        channels.Denmark,
        "castle",
        [],
      ]);
    }
    const firstUnread = await server.call("GET", "/api/v1/messages", {
      ...as("othello"),
      query: { anchor: "first_unread", num_after: 0 },
    });
    const unread = await db.prisma.userMessage.findFirstOrThrow({
      where: { user_id: id("othello"), flags: 0n },
      orderBy: { message_id: "asc" },
    });
    expect(firstUnread.body.anchor).toBe(unread.message_id);
  });

  it("refuses an unknown narrow operator, a bad anchor and too many messages", async () => {
    const bad = (query: Record<string, unknown>) =>
      server.call("GET", "/api/v1/messages", { ...as("othello"), query });
    expect((await bad({ narrow: [{ operator: "bogus", operand: "x" }] })).body).toEqual(
      apiError("Invalid narrow operator: bogus"),
    );
    expect((await bad({ narrow: [{ operator: "near", operand: "x" }] })).body).toEqual(
      apiError('Invalid narrow operand for near: "x"'),
    );
    expect((await bad({ anchor: "middle" })).body).toEqual(apiError("Invalid anchor"));
    expect((await bad({ num_before: 4000, num_after: 2000 })).body).toEqual(
      apiError("Too many messages requested (maximum 5000)."),
    );
  });
});

describe("POST /api/v1/mark_all_as_read", () => {
  it("stops at a tiny budget after progress, and a repeat completes; no message is skipped", async () => {
    const realm = await db.prisma.realm.findFirstOrThrow();
    await db.sql.exec(`
      WITH m AS (
        INSERT INTO messages (realm_id, sender_id, channel_id, topic, content, rendered_content)
        SELECT ${realm.id}, ${id("hamlet")}, ${channels.Verona}, 'bulk', 'm' || n, '<p>m' || n || '</p>'
        FROM generate_series(1, 10000) AS n
        RETURNING id)
      INSERT INTO user_messages (user_id, message_id, flags) SELECT ${id("cordelia")}, id, 0 FROM m;`);
    const unreadBefore = await db.prisma.userMessage.count({
      where: { user_id: id("cordelia"), flags: 0n },
    });
    expect(unreadBefore).toBeGreaterThan(10_000);
    const queue = (
      await server.call("POST", "/api/v1/register", {
        ...as("cordelia"),
        form: { event_types: ["update_message_flags"] },
      })
    ).body.queue_id as string;

    const partial = await hasty.call("POST", "/api/v1/mark_all_as_read", as("cordelia"));
    expect(validateMarkRead(partial.body)).toEqual([]);
    expect(partial.body).toEqual({ result: "success", msg: "", complete: false });
    const left = await db.prisma.userMessage.count({
      where: { user_id: id("cordelia"), flags: 0n },
    });
    expect(left).toBeLessThan(unreadBefore);
    expect(left).toBeGreaterThan(0);
    // Newest first: everything still unread is older than everything marked.
    const bulk = await db.prisma.message.findMany({
      where: { topic: "bulk" },
      select: { id: true },
    });
    const oldestMarked = await db.prisma.userMessage.findFirstOrThrow({
      where: { user_id: id("cordelia"), message_id: { in: bulk.map((m) => m.id) }, flags: 1n },
      orderBy: { message_id: "asc" },
    });
    const newestUnread = await db.prisma.userMessage.findFirstOrThrow({
      where: { user_id: id("cordelia"), flags: 0n },
      orderBy: { message_id: "desc" },
    });
    expect(newestUnread.message_id).toBeLessThan(oldestMarked.message_id);

    const complete = await server.call("POST", "/api/v1/mark_all_as_read", as("cordelia"));
    expect(complete.body).toEqual({ result: "success", msg: "", complete: true });
    expect(
      await db.prisma.userMessage.count({ where: { user_id: id("cordelia"), flags: 0n } }),
    ).toBe(0);
    const events = await server.call("GET", "/api/v1/events", {
      ...as("cordelia"),
      query: { queue_id: queue, dont_block: true },
    });
    const marked = (events.body.events as { type: string; messages: number[] }[]).flatMap((e) => {
      expect(e.type).toBe("update_message_flags");
      return e.messages;
    });
    expect(marked).toHaveLength(unreadBefore);
    expect(new Set(marked).size).toBe(unreadBefore);
  });

  it("answers complete: true when nothing is unread", async () => {
    expect((await server.call("POST", "/api/v1/mark_all_as_read", as("iago"))).body).toEqual({
      result: "success",
      msg: "",
      complete: true,
    });
  });
});
