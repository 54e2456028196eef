import { type TestDatabase, freshDatabase } from "./support/database";
import {
  type Cast,
  type TestServer,
  apiError,
  channelIds,
  loadCast,
  startTestServer,
} from "./support/server";
import { zulipResponseSchema } from "./support/zulip-schema";

/**
 * GET /messages as real clients call it: every anchor form and every narrow
 * operator they send, with negation, each answer checked against Zulip's
 * schema. Othello and Cordelia get their own messages here, so each
 * expectation names the exact ids it should find.
 */
const validate = zulipResponseSchema("companions", "/messages", "get");
const validateMatches = zulipResponseSchema("session", "/messages/matches_narrow", "get");

let db: TestDatabase;
let server: TestServer;
let cast: Cast;
let channels: Record<string, number>;
const sent: Record<string, number> = {};

const as = (who: string) => cast.as(who);
const id = (who: string) => cast.id(who);

async function send(who: string, form: Record<string, string>): Promise<number> {
  const reply = await server.call("POST", "/api/v1/messages", { ...as(who), form });
  expect(reply.status).toBe(200);
  return reply.body.id as number;
}

type Term = { operator: string; operand: unknown; negated?: boolean };

async function fetch(who: string, query: Record<string, unknown>) {
  const reply = await server.call("GET", "/api/v1/messages", {
    ...as(who),
    query: Object.fromEntries(
      Object.entries(query).map(([k, v]) => [k, typeof v === "string" ? v : JSON.stringify(v)]),
    ),
  });
  return reply;
}

/** The ids of `who`'s messages in the narrow, oldest first (all of them). */
async function ids(who: string, narrow: Term[]): Promise<number[]> {
  const reply = await fetch(who, { anchor: "oldest", num_after: 1000, narrow });
  expect(reply.status).toBe(200);
  expect(validate(reply.body)).toEqual([]);
  return (reply.body.messages as { id: number }[]).map((m) => m.id);
}

beforeAll(async () => {
  db = await freshDatabase("seeded");
  server = await startTestServer({ db });
  cast = await loadCast(server, ["iago", "hamlet", "othello", "cordelia"]);
  channels = await channelIds(server);
  const denmark = String(channels.Denmark);
  sent.dm = await send("hamlet", { type: "direct", to: `[${id("othello")}]`, content: "to you" });
  sent.group = await send("hamlet", {
    type: "direct",
    to: `[${id("othello")},${id("cordelia")}]`,
    content: "to you both",
  });
  sent.link = await send("othello", {
    type: "stream",
    to: denmark,
    topic: "narrows",
    content: "see https://example.com/elsinore",
  });
  sent.words = await send("hamlet", {
    type: "stream",
    to: denmark,
    topic: "narrows",
    content: "The rest is silence, said the prince",
  });
  sent.resolved = await send("hamlet", {
    type: "stream",
    to: denmark,
    topic: "\u2714 settled",
    content: "done",
  });
  sent.followed = await send("iago", {
    type: "stream",
    to: denmark,
    topic: "watched",
    content: "follow me",
  });
  // Flags a client would set: a star and a mention (their endpoints come later).
  await db.prisma.userMessage.update({
    where: { user_id_message_id: { user_id: id("othello"), message_id: sent.words } },
    data: { flags: 2n },
  });
  await db.prisma.userMessage.update({
    where: { user_id_message_id: { user_id: id("othello"), message_id: sent.followed } },
    data: { flags: 8n },
  });
  await db.prisma.userTopic.create({
    data: {
      user_id: id("othello"),
      channel_id: channels.Denmark ?? 0,
      topic_name: "Watched",
      visibility_policy: 3,
    },
  });
});

afterAll(async () => {
  await server.close();
  await db.close();
});

describe("GET /api/v1/messages: anchors", () => {
  it("answers Zulip's sentinel anchor for newest, and reads everything older", async () => {
    const reply = await fetch("othello", { anchor: "newest", num_before: 2, num_after: 2 });
    expect(validate(reply.body)).toEqual([]);
    expect(reply.body).toMatchObject({
      anchor: 10_000_000_000_000_000,
      found_anchor: false,
      found_newest: true,
      found_oldest: false,
    });
    expect((reply.body.messages as { id: number }[]).map((m) => m.id)).toEqual([
      sent.resolved,
      sent.followed,
    ]);
  });

  it("takes integer anchors up to 10^16, past the newest id", async () => {
    for (const anchor of ["10000000000000000", "2147483648"]) {
      const reply = await fetch("othello", { anchor, num_before: 1, num_after: 5 });
      expect(reply.status).toBe(200);
      expect(validate(reply.body)).toEqual([]);
      expect(reply.body).toMatchObject({ anchor: Number(anchor), found_anchor: false });
      expect((reply.body.messages as { id: number }[]).map((m) => m.id)).toEqual([sent.followed]);
      expect(reply.body.found_newest).toBe(true);
    }
    const exact = await fetch("othello", { anchor: String(sent.followed), num_after: 5 });
    expect((exact.body.messages as { id: number }[]).map((m) => m.id)).toEqual([sent.followed]);
    expect(exact.body).toMatchObject({ found_anchor: true, found_newest: true });
    for (const anchor of ["10000000000000001", "-1", "1e5", "99999999999999999999"]) {
      const reply = await fetch("othello", { anchor });
      expect([reply.status, reply.body]).toEqual([400, apiError("Invalid anchor")]);
    }
  });

  it("anchors at a date: the first message sent at or after it", async () => {
    const reply = await fetch("othello", {
      anchor: "date",
      anchor_date: "2026-01-01T09:10:00Z",
      num_before: 0,
      num_after: 0,
    });
    expect(validate(reply.body)).toEqual([]);
    const [message] = reply.body.messages as { id: number; timestamp: number }[];
    expect(message?.timestamp).toBe(Date.UTC(2026, 0, 1, 9, 10) / 1000);
    expect(reply.body.found_anchor).toBe(true);
    const future = await fetch("othello", {
      anchor: "date",
      anchor_date: "2999-01-01T00:00:00Z",
      num_before: 1,
    });
    expect(future.body).toMatchObject({ anchor: 10_000_000_000_000_000, found_newest: true });
    const missing = await fetch("othello", { anchor: "date" });
    expect(missing.body).toEqual(apiError("Missing 'anchor_date' argument"));
    const bad = await fetch("othello", { anchor: "date", anchor_date: "yesterday" });
    expect(bad.body).toEqual(apiError("Invalid anchor_date"));
  });
});

describe("GET /api/v1/messages: narrows", () => {
  it("finds a direct conversation by id, list, address or comma-separated addresses", async () => {
    for (const operand of [
      id("hamlet"),
      [id("hamlet")],
      "hamlet@example.com",
      "HAMLET@example.com",
      String(id("hamlet")),
    ])
      expect(await ids("othello", [{ operator: "dm", operand }])).toEqual([sent.dm]);
    expect(
      await ids("othello", [
        { operator: "pm-with", operand: "hamlet@example.com,cordelia@example.com" },
      ]),
    ).toEqual([sent.group]);
    expect(
      await ids("othello", [{ operator: "dm", operand: [id("cordelia"), id("hamlet")] }]),
    ).toEqual([sent.group]);
  });

  it("refuses a conversation with someone unknown rather than answering another", async () => {
    const reply = await fetch("othello", {
      narrow: [{ operator: "dm", operand: "nobody@example.com" }],
    });
    expect([reply.status, reply.body]).toEqual([
      400,
      apiError('Invalid narrow operator: unknown user in "nobody@example.com"'),
    ]);
  });

  it("dm-including, sender, is:dm and their negations", async () => {
    expect(await ids("othello", [{ operator: "dm-including", operand: id("cordelia") }])).toEqual([
      sent.group,
    ]);
    expect(await ids("othello", [{ operator: "is", operand: "dm" }])).toEqual([
      sent.dm,
      sent.group,
    ]);
    const fromHamlet = await ids("othello", [
      { operator: "sender", operand: "hamlet@example.com" },
      { operator: "is", operand: "private", negated: true },
    ]);
    expect(fromHamlet).toEqual(expect.arrayContaining([sent.words, sent.resolved]));
    expect(fromHamlet).not.toContain(sent.dm);
    expect(await ids("othello", [{ operator: "sender", operand: "me" }])).toEqual([sent.link]);
  });

  it("is:starred, is:mentioned, is:followed, is:resolved, is:unread", async () => {
    expect(await ids("othello", [{ operator: "is", operand: "starred" }])).toEqual([sent.words]);
    expect(await ids("othello", [{ operator: "is", operand: "mentioned" }])).toEqual([
      sent.followed,
    ]);
    expect(await ids("othello", [{ operator: "is", operand: "followed" }])).toEqual([
      sent.followed,
    ]);
    expect(await ids("othello", [{ operator: "is", operand: "resolved" }])).toEqual([
      sent.resolved,
    ]);
    // The star does not make a message read: is:unread looks at the read bit alone.
    expect(await ids("othello", [{ operator: "is", operand: "unread" }])).toContain(sent.words);
    expect(await ids("othello", [{ operator: "is", operand: "unread" }])).not.toContain(sent.link);
  });

  it("search (full-text), has:link, id, near and channels:public", async () => {
    expect(await ids("othello", [{ operator: "search", operand: "silence prince" }])).toEqual([
      sent.words,
    ]);
    expect(await ids("othello", [{ operator: "search", operand: "SILENCE" }])).toEqual([
      sent.words,
    ]);
    expect(await ids("othello", [{ operator: "has", operand: "link" }])).toEqual([sent.link]);
    expect(await ids("othello", [{ operator: "id", operand: String(sent.dm) }])).toEqual([sent.dm]);
    const near = await ids("othello", [
      { operator: "channel", operand: "Denmark" },
      { operator: "topic", operand: "narrows" },
      { operator: "near", operand: String(sent.words) },
    ]);
    expect(near).toEqual([sent.link, sent.words]);
    const publicOnes = await ids("othello", [{ operator: "channels", operand: "public" }]);
    expect(publicOnes).toContain(sent.link);
    expect(publicOnes).not.toContain(sent.dm);
  });

  it("refuses an operand the operator cannot take", async () => {
    for (const [term, msg] of [
      [{ operator: "is", operand: "sleepy" }, 'Invalid narrow operand for is: "sleepy"'],
      [{ operator: "has", operand: "cake" }, 'Invalid narrow operand for has: "cake"'],
      [{ operator: "channels", operand: "all" }, 'Invalid narrow operand for channels: "all"'],
      [{ operator: "sender", operand: [1, 2] }, "Invalid narrow operand for sender: [1,2]"],
    ] as const) {
      const reply = await fetch("othello", { narrow: [term] });
      expect([reply.status, reply.body]).toEqual([400, apiError(msg)]);
    }
  });
});

describe("GET /api/v1/messages/matches_narrow", () => {
  it("tells which of the given messages match the narrow", async () => {
    const reply = await server.call("GET", "/api/v1/messages/matches_narrow", {
      ...as("othello"),
      query: {
        msg_ids: JSON.stringify([sent.dm, sent.words, sent.link, 999_999]),
        narrow: JSON.stringify([{ operator: "channel", operand: "Denmark" }]),
      },
    });
    expect(reply.status).toBe(200);
    expect(validateMatches(reply.body)).toEqual([]);
    const messages = reply.body.messages as Record<string, { match_content: string }>;
    expect(
      Object.keys(messages)
        .map(Number)
        .sort((a, b) => a - b),
    ).toEqual([sent.link ?? 0, sent.words ?? 0].sort((a, b) => a - b));
    expect(messages[String(sent.words)]?.match_content).toContain("silence");
  });

  it("never answers for another user's messages", async () => {
    const reply = await server.call("GET", "/api/v1/messages/matches_narrow", {
      ...as("iago"),
      query: { msg_ids: JSON.stringify([sent.dm]), narrow: "[]" },
    });
    expect(reply.status).toBe(200);
    expect(reply.body.messages).toEqual({});
  });
});
