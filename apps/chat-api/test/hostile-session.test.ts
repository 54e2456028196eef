import {
  type Cast,
  type TestServer,
  apiError,
  channelIds,
  createOtherRealm,
  loadCast,
  startTestServer,
} from "./support/server";

/**
 * The session operations of real Zulip clients under hostile input: lists
 * past what one statement may carry, numbers past int32, another realm's
 * ids, repeats at once, and the caps of what a user may grow. Each answer is
 * a 400 in the envelope (never a 5xx), and nothing is stored.
 */
let server: TestServer;
let cast: Cast;
let channels: Record<string, number>;
let other: Awaited<ReturnType<typeof createOtherRealm>>;
const otherHost = { host: "lear.chat.test" };

beforeAll(async () => {
  server = await startTestServer({ env: { CHAT_MAX_OBJECTS_PER_USER: "3" } });
  cast = await loadCast(server, ["hamlet", "othello"]);
  channels = await channelIds(server);
  other = await createOtherRealm(server);
});

afterAll(() => server.close());

const as = (who: string) => cast.as(who);
const id = (who: string) => cast.id(who);
const call = (who: string, method: string, path: string, form: Record<string, string> = {}) =>
  server.call(method, `/api/v1${path}`, { ...as(who), form });

async function send(who: string, to: number): Promise<number> {
  const reply = await call(who, "POST", "/messages", {
    type: "direct",
    to: JSON.stringify([to]),
    content: "hostile",
  });
  expect(reply.status).toBe(200);
  return reply.body.id as number;
}

describe("lists past one statement's parameters", () => {
  it("refuses more than 5,000 message ids in POST /messages/flags, and stars none", async () => {
    const mine = await send("hamlet", id("othello"));
    for (const length of [5001, 70_000]) {
      const ids = Array.from({ length }, (_, i) => i + 1);
      ids[0] = mine;
      const reply = await call("othello", "POST", "/messages/flags", {
        messages: JSON.stringify(ids),
        op: "add",
        flag: "starred",
      });
      expect([reply.status, reply.body]).toEqual([400, apiError("messages is too large")]);
    }
    const stars = await server.db.prisma.userMessage.count({
      where: { user_id: id("othello"), flags: { gte: 2n } },
    });
    expect(stars).toBe(0);
  });
});

describe("numbers past int32 and another realm's ids", () => {
  it("answers a 400 for ids past int32 in bodies", async () => {
    const reply = await call("othello", "POST", "/user_topics", {
      stream_id: "2147483648",
      topic: "t",
      visibility_policy: "1",
    });
    expect([reply.status, reply.body]).toEqual([400, apiError("stream_id is too large")]);
    const typing = await call("othello", "POST", "/typing", {
      op: "start",
      to: "[2147483648]",
    });
    expect(typing.status).toBe(400);
  });

  it("never reaches another realm's messages, channels or people", async () => {
    const outsider = { auth: [other.outsider.email, other.outsider.apiKey] as const, ...otherHost };
    const message = await send("hamlet", id("othello"));
    const denmark = channels.Denmark ?? 0;
    const asOutsider = (method: string, path: string, form: Record<string, string> = {}) =>
      server.call(method, `/api/v1${path}`, { ...outsider, form });
    for (const [method, path, form, msg] of [
      ["GET", `/messages/${message}`, {}, "Invalid message(s)"],
      ["POST", `/messages/${message}/reactions`, { emoji_name: "octopus" }, "Invalid message(s)"],
      ["PATCH", `/messages/${message}`, { content: "mine" }, "Invalid message(s)"],
      ["DELETE", `/messages/${message}`, {}, "Invalid message(s)"],
      ["GET", `/messages/${message}/history`, {}, "Invalid message(s)"],
      ["GET", `/messages/${message}/read_receipts`, {}, "Invalid message(s)"],
      [
        "POST",
        "/user_topics",
        { stream_id: String(denmark), topic: "t", visibility_policy: "1" },
        "Invalid channel ID",
      ],
      ["PATCH", `/streams/${denmark}`, { description: "taken" }, "Invalid channel ID"],
      ["POST", "/mark_stream_as_read", { stream_id: String(denmark) }, "Invalid channel ID"],
      ["POST", "/typing", { op: "start", to: JSON.stringify([id("hamlet")]) }, "Invalid user ID"],
      ["GET", "/users/hamlet@example.com/presence", {}, "No such user"],
    ] as const) {
      const reply = await asOutsider(method, path, form);
      expect([method, path, reply.status, reply.body]).toEqual([method, path, 400, apiError(msg)]);
    }
    // Flags on another realm's message change nothing (and say nothing of it).
    const flagged = await asOutsider("POST", "/messages/flags", {
      messages: JSON.stringify([message]),
      op: "add",
      flag: "read",
    });
    expect(flagged.status).toBe(200);
    const row = await server.db.prisma.userMessage.findUniqueOrThrow({
      where: { user_id_message_id: { user_id: id("othello"), message_id: message } },
    });
    expect(row.flags).toBe(0n);
    const untouched = await server.db.prisma.message.findUniqueOrThrow({ where: { id: message } });
    expect([untouched.content, untouched.edit_history]).toEqual(["hostile", null]);
  });
});

describe("repeats at once", () => {
  it("stores one reaction however many identical requests race", async () => {
    const message = await send("hamlet", id("othello"));
    const replies = await Promise.all(
      Array.from({ length: 8 }, () =>
        call("othello", "POST", `/messages/${message}/reactions`, { emoji_name: "tada" }),
      ),
    );
    const statuses = replies.map((r) => r.status).sort();
    expect(statuses).toEqual([200, 400, 400, 400, 400, 400, 400, 400]);
    for (const reply of replies.filter((r) => r.status === 400))
      expect(reply.body).toEqual(apiError("Reaction already exists."));
    expect(await server.db.prisma.reaction.count({ where: { message_id: message } })).toBe(1);
  });
});

describe("caps on what a user grows", () => {
  it("topic policies: CHAT_MAX_OBJECTS_PER_USER topics, by either endpoint", async () => {
    const denmark = String(channels.Denmark);
    const policy = (topic: string, visibility: string) =>
      call("hamlet", "POST", "/user_topics", {
        stream_id: denmark,
        topic,
        visibility_policy: visibility,
      });
    for (const topic of ["one", "two", "three"])
      expect((await policy(topic, "1")).status).toBe(200);
    const over = apiError("You have too many topic settings (limit: 3).");
    expect((await policy("four", "3")).body).toEqual(over);
    const legacy = await call("hamlet", "PATCH", "/users/me/subscriptions/muted_topics", {
      stream_id: denmark,
      topic: "five",
      op: "add",
    });
    expect(legacy.body).toEqual(over);
    // A topic that has a policy may change it, in any case of its name.
    expect((await policy("ONE", "3")).status).toBe(200);
    expect(await server.db.prisma.userTopic.count({ where: { user_id: id("hamlet") } })).toBe(3);
  });

  it("a message's edit history: no edit past 1,000", async () => {
    const message = await send("othello", id("hamlet"));
    const history = Array.from({ length: 1000 }, (_, i) => ({
      user_id: id("othello"),
      timestamp: i,
      prev_content: "older",
      prev_rendered_content: "<p>older</p>",
    }));
    await server.db.prisma.message.update({
      where: { id: message },
      data: { edit_history: history },
    });
    const reply = await call("othello", "PATCH", `/messages/${message}`, { content: "again" });
    expect([reply.status, reply.body]).toEqual([
      400,
      apiError("This message has been edited too many times (limit: 1000)."),
    ]);
    const row = await server.db.prisma.message.findUniqueOrThrow({ where: { id: message } });
    expect(row.content).toBe("hostile");
  });

  it("a topic move: at most 5,000 messages at once, and nothing moves past it", async () => {
    const denmark = channels.Denmark ?? 0;
    const realm = await server.db.prisma.realm.findFirstOrThrow({ where: { subdomain: "" } });
    await server.db.prisma.message.createMany({
      data: Array.from({ length: 5001 }, (_, i) => ({
        realm_id: realm.id,
        sender_id: id("hamlet"),
        channel_id: denmark,
        topic: "crowded",
        content: `m${i}`,
        rendered_content: `<p>m${i}</p>`,
      })),
    });
    const first = await server.db.prisma.message.findFirstOrThrow({
      where: { channel_id: denmark, topic: "crowded" },
      orderBy: { id: "asc" },
    });
    await server.db.prisma.userMessage.create({
      data: { user_id: id("hamlet"), message_id: first.id, flags: 1n },
    });
    const reply = await call("hamlet", "PATCH", `/messages/${first.id}`, {
      topic: "emptier",
      propagate_mode: "change_all",
    });
    expect([reply.status, reply.body]).toEqual([
      400,
      apiError(
        "Too many messages to move at once (limit: 5000); move fewer with change_one or change_later.",
      ),
    ]);
    expect(
      await server.db.prisma.message.count({ where: { channel_id: denmark, topic: "crowded" } }),
    ).toBe(5001);
  });

  it("alert words: CHAT_MAX_OBJECTS_PER_USER words", async () => {
    const reply = await call("othello", "POST", "/users/me/alert_words", {
      alert_words: JSON.stringify(["a", "b", "c", "d"]),
    });
    expect([reply.status, reply.body]).toEqual([
      400,
      apiError("You have too many alert words (limit: 3)."),
    ]);
    expect(await server.db.prisma.alertWord.count({ where: { user_id: id("othello") } })).toBe(0);
  });
});

describe("malformed bodies", () => {
  it.each<[string, string, Record<string, string>, string]>([
    ["POST", "/users/me/alert_words", { alert_words: "lear" }, "alert_words is not valid JSON"],
    [
      "POST",
      "/users/me/subscriptions/properties",
      { subscription_data: '[{"stream_id":1}]' },
      'subscription_data[0]["property"] field is missing: Field required',
    ],
    ["PATCH", "/settings", { web_font_size_px: "1e400" }, "web_font_size_px is not an integer"],
    [
      "POST",
      "/messages/flags",
      { messages: "[1]", op: "add", flag: "x".repeat(101) },
      "flag is too long (limit: 100 characters)",
    ],
    [
      "POST",
      "/user_topics",
      { stream_id: "1", topic: "x".repeat(61), visibility_policy: "1" },
      "topic is too long (limit: 60 characters)",
    ],
  ])("%s %s refuses %j", async (method, path, form, msg) => {
    const reply = await call("othello", method, path, form);
    expect([reply.status, reply.body]).toEqual([400, apiError(msg)]);
  });
});
