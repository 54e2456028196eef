import {
  type Cast,
  type TestServer,
  apiError,
  channelIds,
  listenAs,
  loadCast,
  startTestServer,
} from "./support/server";
import { zulipResponseSchema } from "./support/zulip-schema";

/**
 * Personal message flags as clients change them: POST /messages/flags, its
 * narrow form, and marking a channel or a topic read; each with its
 * `update_message_flags` event, and register's unread counts agreeing after.
 */
const validate = {
  flags: zulipResponseSchema("session", "/messages/flags", "post"),
  narrow: zulipResponseSchema("session", "/messages/flags/narrow", "post"),
  channelRead: zulipResponseSchema("session", "/mark_stream_as_read", "post"),
  topicRead: zulipResponseSchema("session", "/mark_topic_as_read", "post"),
};

let server: TestServer;
let cast: Cast;
let channels: Record<string, number>;

beforeAll(async () => {
  server = await startTestServer();
  cast = await loadCast(server, ["hamlet", "othello", "cordelia", "iago"]);
  channels = await channelIds(server);
});

afterAll(() => server.close());

const as = (who: string) => cast.as(who);
const id = (who: string) => cast.id(who);

async function send(who: string, form: Record<string, string>): Promise<number> {
  const reply = await server.call("POST", "/api/v1/messages", { ...as(who), form });
  expect(reply.status).toBe(200);
  return reply.body.id as number;
}

/** A queue of `who` for update_message_flags; answers a function that drains it. */
const listen = (who: string) => listenAs(server, as(who), ["update_message_flags"]);

async function flagsOf(who: string, messageId: number): Promise<string[]> {
  const reply = await server.call("GET", "/api/v1/messages", {
    ...as(who),
    query: { anchor: String(messageId), num_before: "0", num_after: "0" },
  });
  return (reply.body.messages as { flags: string[] }[])[0]?.flags ?? [];
}

const post = (who: string, path: string, form: Record<string, string>) =>
  server.call("POST", `/api/v1${path}`, { ...as(who), form });

describe("POST /api/v1/messages/flags", () => {
  it("stars and unstars the caller's messages, with events, leaving others' alone", async () => {
    const drain = await listen("othello");
    const mine = await send("hamlet", {
      type: "direct",
      to: `[${id("othello")}]`,
      content: "star",
    });
    const notMine = await send("hamlet", {
      type: "direct",
      to: `[${id("cordelia")}]`,
      content: "x",
    });
    const reply = await post("othello", "/messages/flags", {
      messages: JSON.stringify([mine, notMine]),
      op: "add",
      flag: "starred",
    });
    expect(reply.status).toBe(200);
    expect(validate.flags(reply.body)).toEqual([]);
    expect(await flagsOf("othello", mine)).toEqual(["starred"]);
    expect(await flagsOf("cordelia", notMine)).toEqual([]);
    const events = await drain();
    expect(events).toEqual([
      expect.objectContaining({
        type: "update_message_flags",
        op: "add",
        flag: "starred",
        messages: [mine],
        all: false,
      }),
    ]);
    // Starring again changes nothing, and sends nothing.
    await post("othello", "/messages/flags", {
      messages: JSON.stringify([mine]),
      op: "add",
      flag: "starred",
    });
    expect(await drain()).toEqual([]);
    await post("othello", "/messages/flags", {
      messages: JSON.stringify([mine]),
      op: "remove",
      flag: "starred",
    });
    expect(await flagsOf("othello", mine)).toEqual([]);
    expect((await drain()).map((e) => e.op)).toEqual(["remove"]);
  });

  it("names in its event only the messages it changed, ascending, whatever order they came in", async () => {
    const drain = await listen("othello");
    const [first, second, third] = [
      await send("hamlet", { type: "direct", to: `[${id("othello")}]`, content: "one" }),
      await send("hamlet", { type: "direct", to: `[${id("othello")}]`, content: "two" }),
      await send("hamlet", { type: "direct", to: `[${id("othello")}]`, content: "three" }),
    ];
    await post("othello", "/messages/flags", {
      messages: JSON.stringify([second]),
      op: "add",
      flag: "read",
    });
    await post("othello", "/messages/flags", {
      messages: JSON.stringify([third, second, first, third]),
      op: "add",
      flag: "read",
    });
    const events = await drain();
    expect(events.map((e) => e.messages)).toEqual([[second], [first, third]]);
    expect(events[1]).toEqual({
      type: "update_message_flags",
      op: "add",
      operation: "add",
      flag: "read",
      messages: [first, third],
      all: false,
    });
    for (const message of [first, second, third])
      expect(await flagsOf("othello", message)).toEqual(["read"]);
  });

  it("marks read and unread; unread again carries message_details", async () => {
    const drain = await listen("othello");
    const message = await send("hamlet", {
      type: "stream",
      to: String(channels.Denmark),
      topic: "flags",
      content: "read me",
    });
    await post("othello", "/messages/flags", {
      messages: JSON.stringify([message]),
      op: "add",
      flag: "read",
    });
    expect(await flagsOf("othello", message)).toEqual(["read"]);
    await post("othello", "/messages/flags", {
      messages: JSON.stringify([message]),
      op: "remove",
      flag: "read",
    });
    const events = await drain();
    expect(events.at(-1)).toMatchObject({
      op: "remove",
      flag: "read",
      messages: [message],
      message_details: {
        [String(message)]: {
          type: "stream",
          stream_id: channels.Denmark,
          topic: "flags",
          unmuted_stream_msg: true,
        },
      },
    });
  });

  it("refuses an unknown flag and one that is not the user's to set", async () => {
    for (const [flag, msg] of [
      ["sparkly", "Invalid flag: 'sparkly'"],
      ["mentioned", "Flag not editable: 'mentioned'"],
    ] as const) {
      const reply = await post("othello", "/messages/flags", {
        messages: "[1]",
        op: "add",
        flag,
      });
      expect([reply.status, reply.body]).toEqual([400, apiError(msg)]);
    }
    const badOp = await post("othello", "/messages/flags", {
      messages: "[1]",
      op: "toggle",
      flag: "read",
    });
    expect([badOp.status, badOp.body]).toEqual([400, apiError("Invalid op")]);
  });
});

describe("POST /api/v1/messages/flags/narrow", () => {
  it("marks a window of a narrow and says where it reached", async () => {
    const ids = [];
    for (let n = 0; n < 3; n++)
      ids.push(
        await send("hamlet", {
          type: "stream",
          to: String(channels.Denmark),
          topic: "narrow flags",
          content: `m${n}`,
        }),
      );
    const reply = await post("cordelia", "/messages/flags/narrow", {
      anchor: "oldest",
      num_before: "0",
      num_after: "2",
      narrow: JSON.stringify([
        { operator: "channel", operand: channels.Denmark },
        { operator: "topic", operand: "narrow flags" },
      ]),
      op: "add",
      flag: "read",
    });
    expect(reply.status).toBe(200);
    expect(validate.narrow(reply.body)).toEqual([]);
    expect(reply.body).toMatchObject({
      processed_count: 2,
      updated_count: 2,
      first_processed_id: ids[0],
      last_processed_id: ids[1],
      found_oldest: true,
      found_newest: false,
    });
    expect(await flagsOf("cordelia", ids[2] ?? 0)).toEqual([]);
    const rest = await post("cordelia", "/messages/flags/narrow", {
      anchor: String(ids[1]),
      include_anchor: "false",
      num_before: "0",
      num_after: "1000",
      narrow: JSON.stringify([{ operator: "topic", operand: "narrow flags" }]),
      op: "add",
      flag: "read",
    });
    expect(rest.body).toMatchObject({
      processed_count: 1,
      updated_count: 1,
      first_processed_id: ids[2],
      found_newest: true,
    });
  });
});

describe("POST /api/v1/mark_stream_as_read and /mark_topic_as_read", () => {
  it("marks one topic, then the whole channel, read; register's unread counts agree", async () => {
    const unreadIn = async () => {
      const state = await server.call("POST", "/api/v1/register", {
        ...as("othello"),
        form: { fetch_event_types: JSON.stringify(["message", "update_message_flags"]) },
      });
      const streams = (
        state.body.unread_msgs as {
          streams: { stream_id: number; topic: string; unread_message_ids: number[] }[];
        }
      ).streams;
      return streams.filter((s) => s.stream_id === channels.Scotland);
    };
    const scotland = String(channels.Scotland);
    const drain = await listen("othello");
    const heath = [
      await send("hamlet", { type: "stream", to: scotland, topic: "heath", content: "a" }),
      await send("hamlet", { type: "stream", to: scotland, topic: "Heath", content: "c" }),
    ];
    const castle = await send("hamlet", {
      type: "stream",
      to: scotland,
      topic: "castle",
      content: "b",
    });
    expect((await unreadIn()).map((s) => s.topic)).toEqual(expect.arrayContaining(["heath"]));
    const topic = await post("othello", "/mark_topic_as_read", {
      stream_id: scotland,
      topic_name: "HEATH",
    });
    expect(validate.topicRead(topic.body)).toEqual([]);
    const afterTopic = await unreadIn();
    expect(afterTopic.map((s) => s.topic)).not.toContain("heath");
    expect(afterTopic.length).toBeGreaterThan(0);
    // The change and its event are one statement: the event names what changed, ascending.
    const read = { type: "update_message_flags", op: "add", flag: "read", all: false };
    expect(await drain()).toEqual([expect.objectContaining({ ...read, messages: heath })]);
    const channel = await post("othello", "/mark_stream_as_read", { stream_id: scotland });
    expect(validate.channelRead(channel.body)).toEqual([]);
    expect(await unreadIn()).toEqual([]);
    const [event] = await drain();
    expect(event).toEqual(expect.objectContaining(read));
    const marked = (event as { messages: number[] }).messages;
    expect(marked).toContain(castle);
    expect(marked).not.toContain(heath[0]);
    expect(marked).toEqual([...marked].sort((a, b) => a - b));
    // Nothing left to mark: no event.
    await post("othello", "/mark_stream_as_read", { stream_id: scotland });
    expect(await drain()).toEqual([]);
  });

  it("refuses a channel the caller cannot see, as missing", async () => {
    const reply = await post("othello", "/mark_stream_as_read", { stream_id: "999999" });
    expect([reply.status, reply.body]).toEqual([400, apiError("Invalid channel ID")]);
  });
});
