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
 * PATCH /messages/{id} with `stream_id`: moving messages to another channel,
 * as Zulip does. The messages take the new channel's recipients (who is not
 * subscribed there loses them, with delete_message; its subscribers gain
 * them, read), everyone who has them gets update_message with
 * `new_stream_id`, the notification bot tells the topics, and the edit
 * history records the move.
 */
const validate = {
  edit: zulipResponseSchema("session", "/messages/{message_id}", "patch"),
  history: zulipResponseSchema("session", "/messages/{message_id}/history", "get"),
};

let server: TestServer;
let cast: Cast;
let channels: Record<string, number>;

beforeAll(async () => {
  server = await startTestServer();
  cast = await loadCast(server, [
    "hamlet",
    "othello",
    "cordelia",
    "iago",
    "desdemona",
    "polonius",
    "prospero",
  ]);
  channels = await channelIds(server);
});

afterAll(() => server.close());

const as = (who: string) => cast.as(who);
const id = (who: string) => cast.id(who);

const send = (who: string, channel: string, topic: string, content: string) =>
  server
    .call("POST", "/api/v1/messages", {
      ...as(who),
      form: { type: "stream", to: String(channels[channel]), topic, content },
    })
    .then((reply) => reply.body.id as number);

const patch = (who: string, messageId: number, form: Record<string, string>) =>
  server.call("PATCH", `/api/v1/messages/${String(messageId)}`, { ...as(who), form });

/** The newest messages of a channel and topic that `who` has. */
async function topicMessages(who: string, channel: string, topic: string) {
  const reply = await server.call("GET", "/api/v1/messages", {
    ...as(who),
    query: {
      anchor: "newest",
      num_before: 20,
      num_after: 0,
      apply_markdown: false,
      narrow: [
        { operator: "channel", operand: channels[channel] },
        { operator: "topic", operand: topic },
      ],
    },
  });
  return reply.body.messages as {
    id: number;
    content: string;
    sender_email: string;
    flags: string[];
    stream_id: number;
  }[];
}

describe("moving messages to another channel", () => {
  it("takes a whole topic into a private channel: outsiders lose it, the channel's people gain it, read", async () => {
    const ids = [
      await send("hamlet", "Denmark", "the plan", "one"),
      await send("othello", "Denmark", "the plan", "two"),
    ];
    const [othello, cordelia, desdemona, hamlet] = await Promise.all([
      listenAs(server, as("othello"), ["update_message", "delete_message", "message"]),
      listenAs(server, as("cordelia"), ["delete_message"], {
        client_capabilities: JSON.stringify({ bulk_message_deletion: true }),
      }),
      listenAs(server, as("desdemona"), ["update_message", "delete_message", "message"]),
      listenAs(server, as("hamlet"), ["update_message", "delete_message", "message"]),
    ]);
    const reply = await patch("hamlet", ids[0] ?? 0, {
      stream_id: String(channels["core team"]),
      propagate_mode: "change_all",
      send_notification_to_old_thread: "true",
    });
    expect(reply.status).toBe(200);
    expect(validate.edit(reply.body)).toEqual([]);

    // Othello is not in "core team": the messages are gone for him.
    expect(await topicMessages("othello", "Denmark", "the plan")).toEqual([
      expect.objectContaining({
        sender_email: "notification-bot@example.com",
        content: `This topic was moved to #**core team>the plan** by @_**King Hamlet|${String(id("hamlet"))}**.`,
      }),
    ]);
    // His client did not declare bulk_message_deletion: one event per message, as Zulip sends them.
    const othelloEvents = await othello();
    const gone = { type: "delete_message", message_type: "stream", stream_id: channels.Denmark };
    expect(othelloEvents.filter((e) => e.type === "delete_message")).toEqual([
      { ...gone, topic: "the plan", message_id: ids[0] },
      { ...gone, topic: "the plan", message_id: ids[1] },
    ]);
    expect((await cordelia()).filter((e) => e.type === "delete_message")).toEqual([
      { ...gone, topic: "the plan", message_ids: ids },
    ]);
    expect(othelloEvents.filter((e) => e.type === "update_message")).toEqual([]);

    // Desdemona is: she keeps them as they were (unread), and hears of the move.
    const moved = await topicMessages("desdemona", "core team", "the plan");
    expect(moved.map((m) => [m.id, m.stream_id, m.flags.includes("read")])).toEqual([
      [ids[0], channels["core team"], false],
      [ids[1], channels["core team"], false],
      [expect.any(Number), channels["core team"], false],
    ]);
    expect(moved[2]).toMatchObject({
      sender_email: "notification-bot@example.com",
      content: `This topic was moved here from #**Denmark>the plan** by @_**King Hamlet|${String(id("hamlet"))}**.`,
    });
    const update = (await desdemona()).find((e) => e.type === "update_message");
    expect(update).toMatchObject({
      user_id: id("hamlet"),
      message_id: ids[0],
      message_ids: ids,
      stream_id: channels.Denmark,
      stream_name: "Denmark",
      new_stream_id: channels["core team"],
      orig_subject: "the plan",
      propagate_mode: "change_all",
    });
    expect(update).not.toHaveProperty("subject");
    expect((await hamlet()).filter((e) => e.type === "update_message")).toHaveLength(1);

    const history = await server.call(
      "GET",
      `/api/v1/messages/${String(ids[1])}/history`,
      as("iago"),
    );
    expect(validate.history(history.body)).toEqual([]);
    expect((history.body.message_history as Record<string, unknown>[]).at(-1)).toMatchObject({
      prev_stream: channels.Denmark,
      stream: channels["core team"],
      user_id: id("hamlet"),
    });
  });

  it("gives a topic moved into a channel to its people who did not have it, read", async () => {
    const created = await server.call("POST", "/api/v1/users/me/subscriptions", {
      ...as("hamlet"),
      form: { subscriptions: JSON.stringify([{ name: "Wittenberg" }]) },
    });
    expect(created.status).toBe(200);
    channels = await channelIds(server);
    const studies = await send("hamlet", "Wittenberg", "studies", "words, words, words");
    const unread = async () =>
      (
        await server.call("POST", "/api/v1/register", {
          ...as("othello"),
          form: { fetch_event_types: JSON.stringify(["message", "update_message_flags"]) },
        })
      ).body.unread_msgs as { count: number };
    const before = (await unread()).count;
    const othello = await listenAs(server, as("othello"), ["update_message"]);
    const reply = await patch("hamlet", studies, {
      stream_id: String(channels.Verona),
      send_notification_to_new_thread: "false",
    });
    expect(reply.status).toBe(200);
    const gained = await topicMessages("othello", "Verona", "studies");
    expect(gained.map((m) => [m.id, m.flags])).toEqual([[studies, ["read"]]]);
    expect((await unread()).count).toBe(before);
    expect(await othello()).toEqual([
      expect.objectContaining({
        type: "update_message",
        message_ids: [studies],
        new_stream_id: channels.Verona,
      }),
    ]);
  });

  it("moves one message and a new topic, and says so with a link to it", async () => {
    const first = await send("hamlet", "Verona", "market", "apples");
    const second = await send("hamlet", "Verona", "market", "pears");
    const reply = await patch("hamlet", second, {
      stream_id: String(channels.Scotland),
      topic: "fruit",
      propagate_mode: "change_one",
    });
    expect(reply.status).toBe(200);
    const there = await topicMessages("othello", "Scotland", "fruit");
    expect(there.map((m) => m.id)[0]).toBe(second);
    expect(there[1]?.content).toBe(
      `[A message](http://chat.test/#narrow/channel/${String(channels.Scotland)}-Scotland/topic/fruit/near/${String(second)}) was moved here from #**Verona>market** by @_**King Hamlet|${String(id("hamlet"))}**.`,
    );
    // No notice in the old topic unless asked; the first message stays.
    expect((await topicMessages("othello", "Verona", "market")).map((m) => m.id)).toEqual([first]);
  });

  it("takes the topic named, not topics its `_` or `%` would match as a pattern", async () => {
    const patterned = await send("hamlet", "Verona", "off_50%", "patterned");
    const lookalike = await send("hamlet", "Verona", "offX50 and more", "lookalike");
    const reply = await patch("hamlet", patterned, {
      stream_id: String(channels.Scotland),
      propagate_mode: "change_all",
      send_notification_to_new_thread: "false",
      send_notification_to_old_thread: "false",
    });
    expect(reply.status).toBe(200);
    expect((await topicMessages("othello", "Scotland", "off_50%")).map((m) => m.id)).toEqual([
      patterned,
    ]);
    const stayed = await topicMessages("othello", "Verona", "offX50 and more");
    expect(stayed.map((m) => m.id)).toEqual([lookalike]);
  });

  it("says nothing when asked not to", async () => {
    const only = await send("hamlet", "Verona", "quiet", "shh");
    await patch("hamlet", only, {
      stream_id: String(channels.Scotland),
      send_notification_to_new_thread: "false",
    });
    expect((await topicMessages("othello", "Scotland", "quiet")).map((m) => m.id)).toEqual([only]);
  });

  it("refuses what Zulip refuses, and changes nothing", async () => {
    const message = await send("hamlet", "Denmark", "refusals", "stay");
    const direct = (
      await server.call("POST", "/api/v1/messages", {
        ...as("hamlet"),
        form: { type: "direct", to: JSON.stringify([id("othello")]), content: "hi" },
      })
    ).body.id as number;
    const cases: [string, number, Record<string, string>, string][] = [
      [
        "hamlet",
        direct,
        { stream_id: String(channels.Verona) },
        "Direct messages cannot be moved to channels.",
      ],
      [
        "hamlet",
        message,
        { stream_id: String(channels.Verona), content: "changed" },
        "Cannot change message content while changing channel",
      ],
      [
        "polonius",
        message,
        { stream_id: String(channels.Verona) },
        "You don't have permission to move this message",
      ],
      [
        "othello",
        message,
        { stream_id: String(channels["core team"]) },
        `Channel with ID '${String(channels["core team"])}' does not exist`,
      ],
      ["hamlet", message, { stream_id: "999999" }, "Channel with ID '999999' does not exist"],
    ];
    for (const [who, target, form, msg] of cases) {
      const refused = await patch(who, target, form);
      expect([who, refused.status, refused.body]).toEqual([who, 400, apiError(msg)]);
    }
    expect((await topicMessages("hamlet", "Denmark", "refusals")).map((m) => m.id)).toEqual([
      message,
    ]);
  });

  it("lets members move a message for a week, moderators any time", async () => {
    const old = await send("hamlet", "Denmark", "old news", "last month");
    await server.db.prisma.message.update({
      where: { id: old },
      data: { date_sent: new Date(Date.now() - 8 * 86_400_000) },
    });
    const late = await patch("hamlet", old, { stream_id: String(channels.Verona) });
    expect(late.body).toEqual(
      apiError("The time limit for editing this message's channel has passed"),
    );
    const moderator = await patch("prospero", old, { stream_id: String(channels.Verona) });
    expect(moderator.status).toBe(200);
    expect((await topicMessages("hamlet", "Verona", "old news")).map((m) => m.id)[0]).toBe(old);
  });
});
