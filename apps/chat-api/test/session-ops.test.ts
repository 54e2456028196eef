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
 * What a client does in a session besides sending and reading: typing
 * notices, one message by id, leaving channels, topic preferences; each
 * answer checked against Zulip's schema, each event seen by the right people.
 */
const validate = {
  typing: zulipResponseSchema("session", "/typing", "post"),
  message: zulipResponseSchema("session", "/messages/{message_id}", "get"),
  unsubscribe: zulipResponseSchema("session", "/users/me/subscriptions", "delete"),
  unsubscribeError: zulipResponseSchema("session", "/users/me/subscriptions", "delete", "400"),
  userTopic: zulipResponseSchema("session", "/user_topics", "post"),
  react: zulipResponseSchema("session", "/messages/{message_id}/reactions", "post"),
  unreact: zulipResponseSchema("session", "/messages/{message_id}/reactions", "delete"),
  edit: zulipResponseSchema("session", "/messages/{message_id}", "patch"),
  remove: zulipResponseSchema("session", "/messages/{message_id}", "delete"),
  properties: zulipResponseSchema("session", "/users/me/subscriptions/properties", "post"),
  presence: zulipResponseSchema("session", "/users/{user_id_or_email}/presence", "get"),
  alertWords: zulipResponseSchema("session", "/users/me/alert_words", "get"),
  status: zulipResponseSchema("session", "/users/me/status", "post"),
  settings: zulipResponseSchema("session", "/settings", "patch"),
  history: zulipResponseSchema("session", "/messages/{message_id}/history", "get"),
  receipts: zulipResponseSchema("session", "/messages/{message_id}/read_receipts", "get"),
  render: zulipResponseSchema("session", "/messages/render", "post"),
  updateSubscriptions: zulipResponseSchema("session", "/users/me/subscriptions", "patch"),
  updateStream: zulipResponseSchema("session", "/streams/{stream_id}", "patch"),
  events: zulipResponseSchema("companions", "/events", "get"),
};

let server: TestServer;
let cast: Cast;
let channels: Record<string, number>;

beforeAll(async () => {
  server = await startTestServer();
  cast = await loadCast(server, ["hamlet", "othello", "cordelia", "iago", "polonius", "desdemona"]);
  channels = await channelIds(server);
});

afterAll(() => server.close());

const as = (who: string) => cast.as(who);
const id = (who: string) => cast.id(who);

const post = (who: string, path: string, form: Record<string, string>) =>
  server.call("POST", `/api/v1${path}`, { ...as(who), form });

/** A queue of `who` for `types`; answers a function that drains it. */
const listen = (who: string, types: string[]) => listenAs(server, as(who), types);

describe("POST /api/v1/typing", () => {
  it("tells a direct conversation's people, the typist included, and no one else", async () => {
    const [othello, hamlet, iago] = await Promise.all([
      listen("othello", ["typing"]),
      listen("hamlet", ["typing"]),
      listen("iago", ["typing"]),
    ]);
    const reply = await post("hamlet", "/typing", {
      op: "start",
      to: JSON.stringify([id("othello")]),
    });
    expect(reply.status).toBe(200);
    expect(validate.typing(reply.body)).toEqual([]);
    const expected = {
      type: "typing",
      op: "start",
      message_type: "direct",
      sender: { user_id: id("hamlet"), email: "hamlet@example.com" },
      recipients: [
        { user_id: id("hamlet"), email: "hamlet@example.com" },
        { user_id: id("othello"), email: "othello@example.com" },
      ].sort((a, b) => a.user_id - b.user_id),
    };
    expect(await othello()).toEqual([expected]);
    expect(await hamlet()).toEqual([expected]);
    expect(await iago()).toEqual([]);
  });

  it("tells a channel's other subscribers of a topic, and not the typist", async () => {
    const [othello, hamlet] = await Promise.all([
      listen("othello", ["typing"]),
      listen("hamlet", ["typing"]),
    ]);
    const reply = await post("hamlet", "/typing", {
      type: "stream",
      op: "stop",
      stream_id: String(channels.Denmark),
      topic: "castle",
    });
    expect(reply.status).toBe(200);
    expect(await othello()).toEqual([
      {
        type: "typing",
        op: "stop",
        message_type: "stream",
        sender: { user_id: id("hamlet"), email: "hamlet@example.com" },
        stream_id: channels.Denmark,
        topic: "castle",
      },
    ]);
    expect(await hamlet()).toEqual([]);
  });

  it("refuses what names no conversation", async () => {
    for (const [form, msg] of [
      [{ op: "start" }, "Missing 'to' argument"],
      [{ op: "start", to: "[]" }, "Empty 'to' list"],
      [{ op: "start", to: "[99999]" }, "Invalid user ID"],
      [{ op: "start", type: "stream", topic: "t" }, "Missing 'stream_id' argument"],
      [{ op: "start", type: "stream", stream_id: "999999", topic: "t" }, "Invalid channel ID"],
      [{ op: "typing", to: "[1]" }, "Invalid op"],
    ] as const) {
      const reply = await post("hamlet", "/typing", form);
      expect(reply.status).toBe(400);
      expect(reply.body.msg).toBe(msg);
    }
  });
});

describe("GET /api/v1/messages/{message_id}", () => {
  it("answers one of the caller's messages with flags and source, and no one else's", async () => {
    const sent = await post("hamlet", "/messages", {
      type: "direct",
      to: JSON.stringify([id("othello")]),
      content: "a <b>bold</b> claim",
    });
    const messageId = sent.body.id as number;
    const reply = await server.call("GET", `/api/v1/messages/${messageId}`, as("othello"));
    expect(reply.status).toBe(200);
    expect(validate.message(reply.body)).toEqual([]);
    expect(reply.body.raw_content).toBe("a <b>bold</b> claim");
    expect(reply.body.message).toMatchObject({
      id: messageId,
      flags: [],
      content: "<p>a &lt;b&gt;bold&lt;/b&gt; claim</p>",
    });
    const raw = await server.call("GET", `/api/v1/messages/${messageId}`, {
      ...as("othello"),
      query: { apply_markdown: "false" },
    });
    expect((raw.body.message as { content: string }).content).toBe("a <b>bold</b> claim");
    for (const [who, path] of [
      ["iago", `/api/v1/messages/${messageId}`],
      ["othello", "/api/v1/messages/99999999"],
    ] as const) {
      const refused = await server.call("GET", path, as(who));
      expect([refused.status, refused.body]).toEqual([400, apiError("Invalid message(s)")]);
    }
  });
});

describe("DELETE /api/v1/users/me/subscriptions", () => {
  it("leaves a channel, telling the leaver and the channel's watchers", async () => {
    const made = await post("iago", "/users/me/subscriptions", {
      subscriptions: JSON.stringify([{ name: "leaving" }]),
      principals: JSON.stringify([id("iago"), id("othello"), id("cordelia")]),
    });
    expect(made.status).toBe(200);
    const [othello, cordelia] = await Promise.all([
      listen("othello", ["subscription"]),
      listen("cordelia", ["subscription"]),
    ]);
    const reply = await server.call("DELETE", "/api/v1/users/me/subscriptions", {
      ...as("othello"),
      form: { subscriptions: JSON.stringify(["leaving"]) },
    });
    expect(reply.status).toBe(200);
    expect(validate.unsubscribe(reply.body)).toEqual([]);
    expect(reply.body).toMatchObject({ removed: ["leaving"] });
    const channelId = (
      await server.call("GET", "/api/v1/get_stream_id", {
        ...as("iago"),
        query: { stream: "leaving" },
      })
    ).body.stream_id as number;
    expect(await othello()).toEqual([
      {
        type: "subscription",
        op: "remove",
        subscriptions: [{ name: "leaving", stream_id: channelId }],
      },
    ]);
    expect(await cordelia()).toContainEqual({
      type: "subscription",
      op: "peer_remove",
      stream_ids: [channelId],
      user_ids: [id("othello")],
    });
    // Leaving again removes nothing.
    const again = await server.call("DELETE", "/api/v1/users/me/subscriptions", {
      ...as("othello"),
      form: { subscriptions: JSON.stringify(["leaving"]) },
    });
    expect(again.body).toMatchObject({ removed: [], not_removed: ["leaving"] });
  });

  it("leaves several channels with one remove, and tells each watcher once", async () => {
    for (const [name, inviteOnly] of [
      ["pair-public", false],
      ["pair-public-too", false],
      ["pair-private", true],
    ] as const) {
      const made = await post("iago", "/users/me/subscriptions", {
        subscriptions: JSON.stringify([{ name }]),
        invite_only: String(inviteOnly),
        principals: JSON.stringify([id("iago"), id("othello"), id("cordelia")]),
      });
      expect(made.status).toBe(200);
    }
    const channelId = async (stream: string) =>
      (await server.call("GET", "/api/v1/get_stream_id", { ...as("iago"), query: { stream } })).body
        .stream_id as number;
    const [publicId, otherPublicId, privateId] = [
      await channelId("pair-public"),
      await channelId("pair-public-too"),
      await channelId("pair-private"),
    ];
    const [othello, cordelia, hamlet] = await Promise.all([
      listen("othello", ["subscription"]),
      listen("cordelia", ["subscription"]),
      listen("hamlet", ["subscription"]),
    ]);
    const reply = await server.call("DELETE", "/api/v1/users/me/subscriptions", {
      ...as("othello"),
      form: { subscriptions: JSON.stringify(["pair-public", "pair-public-too", "pair-private"]) },
    });
    expect(reply.body).toMatchObject({
      removed: ["pair-public", "pair-public-too", "pair-private"],
    });
    expect(await othello()).toEqual([
      {
        type: "subscription",
        op: "remove",
        subscriptions: [
          { name: "pair-public", stream_id: publicId },
          { name: "pair-public-too", stream_id: otherPublicId },
          { name: "pair-private", stream_id: privateId },
        ],
      },
    ]);
    // One event per audience: the public channels' watchers hear of both at
    // once; the private channel's (subscribers and administrators) apart.
    expect(await cordelia()).toEqual([
      {
        type: "subscription",
        op: "peer_remove",
        stream_ids: [publicId, otherPublicId],
        user_ids: [id("othello")],
      },
      {
        type: "subscription",
        op: "peer_remove",
        stream_ids: [privateId],
        user_ids: [id("othello")],
      },
    ]);
    expect(await hamlet()).toEqual([
      {
        type: "subscription",
        op: "peer_remove",
        stream_ids: [publicId, otherPublicId],
        user_ids: [id("othello")],
      },
    ]);
  });

  it("removes others only with permission, and answers a missing channel by name", async () => {
    const others = await server.call("DELETE", "/api/v1/users/me/subscriptions", {
      ...as("hamlet"),
      form: {
        subscriptions: JSON.stringify(["Denmark"]),
        principals: JSON.stringify([id("othello")]),
      },
    });
    expect([others.status, others.body]).toEqual([400, apiError("Insufficient permission")]);
    const byAdmin = await server.call("DELETE", "/api/v1/users/me/subscriptions", {
      ...as("iago"),
      form: {
        subscriptions: JSON.stringify(["leaving"]),
        principals: JSON.stringify(["cordelia@example.com"]),
      },
    });
    expect(byAdmin.body).toMatchObject({ removed: ["leaving"] });
    const missing = await server.call("DELETE", "/api/v1/users/me/subscriptions", {
      ...as("hamlet"),
      form: { subscriptions: JSON.stringify(["no such place"]) },
    });
    expect(missing.status).toBe(400);
    expect(validate.unsubscribeError(missing.body)).toEqual([]);
    expect(missing.body).toEqual({
      result: "error",
      msg: "Channel 'no such place' does not exist",
      code: "STREAM_DOES_NOT_EXIST",
      stream: "no such place",
    });
  });
});

describe("POST /api/v1/user_topics", () => {
  it("follows, mutes and resets a topic, with user_topic events", async () => {
    const events = await listen("othello", ["user_topic"]);
    const set = (policy: number) =>
      post("othello", "/user_topics", {
        stream_id: String(channels.Denmark),
        topic: "castle",
        visibility_policy: String(policy),
      });
    const follow = await set(3);
    expect(follow.status).toBe(200);
    expect(validate.userTopic(follow.body)).toEqual([]);
    const followed = await server.call("GET", "/api/v1/messages", {
      ...as("othello"),
      query: {
        anchor: "newest",
        num_before: "5",
        narrow: JSON.stringify([{ operator: "is", operand: "followed" }]),
      },
    });
    const topics = (followed.body.messages as { subject: string }[]).map((m) =>
      m.subject.toLowerCase(),
    );
    expect(topics.length).toBeGreaterThan(0);
    expect(new Set(topics)).toEqual(new Set(["castle"]));
    await set(1);
    await set(0);
    const seen = (await events()).map((e) => [e.topic_name, e.visibility_policy]);
    expect(seen).toEqual([
      ["castle", 3],
      ["castle", 1],
      ["castle", 0],
    ]);
    const state = await post("othello", "/register", {
      fetch_event_types: JSON.stringify(["user_topic"]),
    });
    expect(state.body.user_topics).toEqual([]);
  });

  it("refuses a policy Zulip does not have and a channel the caller cannot see", async () => {
    const bad = await post("othello", "/user_topics", {
      stream_id: String(channels.Denmark),
      topic: "castle",
      visibility_policy: "7",
    });
    expect([bad.status, bad.body]).toEqual([400, apiError("visibility_policy is too large")]);
    const secret = await post("iago", "/users/me/subscriptions", {
      subscriptions: JSON.stringify([{ name: "user-topics secret" }]),
      invite_only: "true",
    });
    expect(secret.status).toBe(200);
    const secretId = (
      await server.call("GET", "/api/v1/get_stream_id", {
        ...as("iago"),
        query: { stream: "user-topics secret" },
      })
    ).body.stream_id as number;
    const hidden = await post("othello", "/user_topics", {
      stream_id: String(secretId),
      topic: "castle",
      visibility_policy: "1",
    });
    expect([hidden.status, hidden.body]).toEqual([400, apiError("Invalid channel ID")]);
  });
});

describe("POST and DELETE /api/v1/messages/{message_id}/reactions", () => {
  it("reacts by name or code, shows reactions in the message, and tells everyone who has it", async () => {
    const sent = await post("hamlet", "/messages", {
      type: "direct",
      to: JSON.stringify([id("othello"), id("cordelia")]),
      content: "react to me",
    });
    const messageId = sent.body.id as number;
    const [hamlet, iago] = await Promise.all([
      listen("hamlet", ["reaction"]),
      listen("iago", ["reaction"]),
    ]);
    const path = `/messages/${messageId}/reactions`;
    const byName = await post("othello", path, { emoji_name: "octopus" });
    expect(byName.status).toBe(200);
    expect(validate.react(byName.body)).toEqual([]);
    const byCode = await post("cordelia", path, {
      emoji_name: "+1",
      emoji_code: "1f44d",
      reaction_type: "unicode_emoji",
    });
    expect(byCode.status).toBe(200);
    const message = await server.call(
      "GET",
      `/api/v1${path.replace("/reactions", "")}`,
      as("hamlet"),
    );
    expect((message.body.message as { reactions: unknown[] }).reactions).toEqual([
      {
        emoji_name: "octopus",
        emoji_code: "1f419",
        reaction_type: "unicode_emoji",
        user_id: id("othello"),
      },
      {
        emoji_name: "+1",
        emoji_code: "1f44d",
        reaction_type: "unicode_emoji",
        user_id: id("cordelia"),
      },
    ]);
    const events = await hamlet();
    expect(events[0]).toEqual({
      type: "reaction",
      op: "add",
      user_id: id("othello"),
      user: {
        user_id: id("othello"),
        email: "othello@example.com",
        full_name: expect.any(String) as string,
      },
      message_id: messageId,
      emoji_name: "octopus",
      emoji_code: "1f419",
      reaction_type: "unicode_emoji",
    });
    expect(events).toHaveLength(2);
    expect(await iago()).toEqual([]);

    const removed = await server.call("DELETE", `/api/v1${path}`, {
      ...as("othello"),
      form: { emoji_name: "octopus" },
    });
    expect(removed.status).toBe(200);
    expect(validate.unreact(removed.body)).toEqual([]);
    expect((await hamlet()).map((e) => [e.op, e.emoji_code])).toEqual([["remove", "1f419"]]);
  });

  it("answers Zulip's errors and stores nothing", async () => {
    const sent = await post("hamlet", "/messages", {
      type: "direct",
      to: JSON.stringify([id("othello")]),
      content: "no reactions here",
    });
    const path = `/messages/${sent.body.id as number}/reactions`;
    for (const [who, form, msg] of [
      ["othello", { emoji_name: "no_such_emoji" }, "Emoji 'no_such_emoji' does not exist"],
      ["othello", { emoji_name: "octopus", emoji_code: "zzzz" }, "Invalid emoji code."],
      ["othello", { emoji_name: "smile", emoji_code: "1f419" }, "Invalid emoji name."],
      [
        "othello",
        { emoji_name: "party", reaction_type: "realm_emoji" },
        "Emoji 'party' does not exist",
      ],
      ["iago", { emoji_name: "octopus" }, "Invalid message(s)"],
    ] as const) {
      const reply = await post(who, path, form);
      expect([reply.status, reply.body]).toEqual([400, apiError(msg)]);
    }
    expect((await post("othello", path, { emoji_name: "octopus" })).status).toBe(200);
    expect((await post("othello", path, { emoji_name: "octopus" })).body).toEqual(
      apiError("Reaction already exists."),
    );
    const missing = await server.call("DELETE", `/api/v1${path}`, {
      ...as("othello"),
      form: { emoji_name: "tada" },
    });
    expect(missing.body).toEqual(apiError("Reaction doesn't exist."));
    const message = await server.call(
      "GET",
      `/api/v1${path.replace("/reactions", "")}`,
      as("othello"),
    );
    expect((message.body.message as { reactions: { emoji_code: string }[] }).reactions).toEqual([
      expect.objectContaining({ emoji_code: "1f419" }),
    ]);
  });

  it("caps one person's different reactions on one message", async () => {
    const sent = await post("hamlet", "/messages", {
      type: "direct",
      to: JSON.stringify([id("othello")]),
      content: "so many feelings",
    });
    const path = `/messages/${sent.body.id as number}/reactions`;
    const names = [
      "smile",
      "heart",
      "tada",
      "octopus",
      "+1",
      "rocket",
      "fire",
      "eyes",
      "star",
      "sunny",
      "cloud",
      "coffee",
      "snowman",
      "umbrella",
      "comet",
      "tm",
      "keyboard",
      "interrobang",
      "info",
      "joy",
    ];
    for (const name of names)
      expect((await post("othello", path, { emoji_name: name })).status).toBe(200);
    const over = await post("othello", path, { emoji_name: "cat" });
    expect([over.status, over.body]).toEqual([
      400,
      apiError("You have too many reactions on this message (limit: 20)."),
    ]);
  });
});

describe("PATCH and DELETE /api/v1/messages/{message_id}", () => {
  const patch = (who: string, messageId: number, form: Record<string, string>) =>
    server.call("PATCH", `/api/v1/messages/${messageId}`, { ...as(who), form });
  const toDenmark = (who: string, topic: string, content: string) =>
    post(who, "/messages", { type: "stream", to: String(channels.Denmark), topic, content });

  it("edits one's own content, with update_message to everyone who has it", async () => {
    const sent = await toDenmark("hamlet", "edits", "frist");
    const messageId = sent.body.id as number;
    const othello = await listen("othello", ["update_message"]);
    const reply = await patch("hamlet", messageId, { content: "first" });
    expect(reply.status).toBe(200);
    expect(validate.edit(reply.body)).toEqual([]);
    const [event] = await othello();
    expect(event).toMatchObject({
      type: "update_message",
      user_id: id("hamlet"),
      message_id: messageId,
      message_ids: [messageId],
      orig_content: "frist",
      content: "first",
      rendered_content: "<p>first</p>",
    });
    const read = await server.call("GET", `/api/v1/messages/${messageId}`, as("othello"));
    expect(read.body.raw_content).toBe("first");
    expect(typeof (read.body.message as { last_edit_timestamp: number }).last_edit_timestamp).toBe(
      "number",
    );
    for (const [who, form, msg] of [
      ["othello", { content: "mine now" }, "You don't have permission to edit this message"],
      ["hamlet", {}, "Nothing to change"],
      ["hamlet", { topic: "edits" }, "Nothing to change"],
    ] as const) {
      const refused = await patch(who, messageId, form);
      // (Zulip's 400 schema here is a oneOf of overlapping branches: no body passes it.)
      expect([refused.status, refused.body]).toEqual([400, apiError(msg)]);
    }
  });

  it("renames a topic for one message, the later ones, or all of them", async () => {
    const ids: number[] = [];
    for (const word of ["a", "b", "c"])
      ids.push((await toDenmark("hamlet", "moving", word)).body.id as number);
    const topicOf = async (messageId: number) =>
      (
        (await server.call("GET", `/api/v1/messages/${messageId}`, as("hamlet"))).body.message as {
          subject: string;
        }
      ).subject;
    const othello = await listen("othello", ["update_message"]);
    expect(
      (
        await patch("hamlet", ids[2] ?? 0, {
          topic: "moved",
          propagate_mode: "change_one",
          send_notification_to_new_thread: "false",
        })
      ).status,
    ).toBe(200);
    expect(await Promise.all(ids.map(topicOf))).toEqual(["moving", "moving", "moved"]);
    await patch("hamlet", ids[1] ?? 0, {
      topic: "moved",
      propagate_mode: "change_later",
      send_notification_to_new_thread: "false",
    });
    expect(await Promise.all(ids.map(topicOf))).toEqual(["moving", "moved", "moved"]);
    await patch("iago", ids[1] ?? 0, { topic: "\u2714 moved", propagate_mode: "change_all" });
    expect(await Promise.all(ids.map(topicOf))).toEqual(["moving", "\u2714 moved", "\u2714 moved"]);
    const events = await othello();
    expect(events.map((e) => [e.orig_subject, e.subject, e.message_ids])).toEqual([
      ["moving", "moved", [ids[2]]],
      ["moving", "moved", [ids[1]]],
      ["moved", "\u2714 moved", [ids[1], ids[2]]],
    ]);
    const resolved = await server.call("GET", "/api/v1/messages", {
      ...as("othello"),
      query: {
        anchor: "newest",
        num_before: "10",
        narrow: JSON.stringify([{ operator: "is", operand: "resolved" }]),
      },
    });
    // Resolving is announced in the topic by the notification bot, as Zulip does.
    const found = resolved.body.messages as { id: number; content: string; sender_email: string }[];
    expect(found.map((m) => m.id).slice(0, 2)).toEqual([ids[1], ids[2]]);
    expect(found.slice(2).map((m) => [m.sender_email, m.content])).toEqual([
      [
        "notification-bot@example.com",
        `<p><span class="user-mention silent" data-user-id="${String(id("iago"))}">Iago</span> has marked this topic as resolved.</p>`,
      ],
    ]);
    const byOther = await patch("othello", ids[0] ?? 0, { topic: "not yours" });
    expect(byOther.body).toEqual(apiError("You don't have permission to edit this message"));
  });

  it("deletes one's own message or, as an administrator, anyone's, with delete_message", async () => {
    const mine = (await toDenmark("othello", "deleting", "oops")).body.id as number;
    const theirs = (await toDenmark("hamlet", "deleting", "rude")).body.id as number;
    const queue = async (who: string, bulkDeletion: boolean) => {
      const reply = await post(who, "/register", {
        event_types: JSON.stringify(["delete_message"]),
        client_capabilities: JSON.stringify({ bulk_message_deletion: bulkDeletion }),
      });
      return async () =>
        (
          (
            await server.call("GET", "/api/v1/events", {
              ...as(who),
              query: { queue_id: String(reply.body.queue_id), dont_block: "true" },
            })
          ).body.events as Record<string, unknown>[]
        ).map(({ id: _id, ...event }) => event);
    };
    const bulk = await queue("cordelia", true);
    const single = await queue("hamlet", false);
    const refused = await server.call("DELETE", `/api/v1/messages/${theirs}`, as("othello"));
    expect([refused.status, refused.body]).toEqual([
      400,
      apiError("You don't have permission to delete this message"),
    ]);
    const own = await server.call("DELETE", `/api/v1/messages/${mine}`, as("othello"));
    expect(own.status).toBe(200);
    expect(validate.remove(own.body)).toEqual([]);
    expect((await server.call("DELETE", `/api/v1/messages/${theirs}`, as("iago"))).status).toBe(
      200,
    );
    expect(await bulk()).toEqual([
      {
        type: "delete_message",
        message_ids: [mine],
        message_type: "stream",
        stream_id: channels.Denmark,
        topic: "deleting",
      },
      {
        type: "delete_message",
        message_ids: [theirs],
        message_type: "stream",
        stream_id: channels.Denmark,
        topic: "deleting",
      },
    ]);
    expect((await single()).map((e) => [e.message_id, e.message_ids])).toEqual([
      [mine, undefined],
      [theirs, undefined],
    ]);
    const gone = await server.call("GET", `/api/v1/messages/${mine}`, as("othello"));
    expect(gone.body).toEqual(apiError("Invalid message(s)"));
  });
});

describe("POST /api/v1/users/me/subscriptions/properties", () => {
  it("changes colour, muting, pinning and notifications, with subscription update events", async () => {
    const events = await listen("othello", ["subscription"]);
    const denmark = channels.Denmark ?? 0;
    const reply = await post("othello", "/users/me/subscriptions/properties", {
      subscription_data: JSON.stringify([
        { stream_id: denmark, property: "color", value: "#AABBCC" },
        { stream_id: denmark, property: "in_home_view", value: false },
        { stream_id: denmark, property: "pin_to_top", value: true },
        { stream_id: denmark, property: "push_notifications", value: false },
      ]),
    });
    expect(reply.status).toBe(200);
    expect(validate.properties(reply.body)).toEqual([]);
    const subs = await server.call("GET", "/api/v1/users/me/subscriptions", as("othello"));
    expect(
      (subs.body.subscriptions as { stream_id: number }[]).find((s) => s.stream_id === denmark),
    ).toMatchObject({
      color: "#aabbcc",
      is_muted: true,
      in_home_view: false,
      pin_to_top: true,
      push_notifications: false,
      desktop_notifications: null,
    });
    expect((await events()).map((e) => [e.op, e.property, e.value])).toEqual([
      ["update", "color", "#aabbcc"],
      ["update", "in_home_view", false],
      ["update", "is_muted", true],
      ["update", "pin_to_top", true],
      ["update", "push_notifications", false],
    ]);
  });

  it("changes nothing when any change is refused", async () => {
    const denmark = channels.Denmark ?? 0;
    for (const [data, msg] of [
      [
        { stream_id: denmark, property: "color", value: "red" },
        "color is not a valid hex color code",
      ],
      [{ stream_id: denmark, property: "pin_to_top", value: "yes" }, "pin_to_top is not a boolean"],
      [
        { stream_id: denmark, property: "sparkle", value: true },
        "Unknown subscription property: sparkle",
      ],
      [
        { stream_id: 999_999, property: "pin_to_top", value: false },
        "Not subscribed to channel ID 999999",
      ],
    ] as const) {
      const reply = await post("cordelia", "/users/me/subscriptions/properties", {
        subscription_data: JSON.stringify([
          { stream_id: denmark, property: "color", value: "#000000" },
          data,
        ]),
      });
      expect([reply.status, reply.body]).toEqual([400, apiError(msg)]);
    }
    const subs = await server.call("GET", "/api/v1/users/me/subscriptions", as("cordelia"));
    const mine = (subs.body.subscriptions as { stream_id: number; color: string }[]).find(
      (s) => s.stream_id === denmark,
    );
    expect(mine?.color).not.toBe("#000000");
  });
});

describe("GET /api/v1/users/{user_id_or_email}/presence", () => {
  it("answers one user's presence by id or address, and refuses bots and strangers", async () => {
    expect((await post("hamlet", "/users/me/presence", { status: "active" })).status).toBe(200);
    for (const ref of [String(id("hamlet")), "hamlet@example.com"]) {
      const reply = await server.call("GET", `/api/v1/users/${ref}/presence`, as("othello"));
      expect(reply.status).toBe(200);
      expect(validate.presence(reply.body)).toEqual([]);
      expect(reply.body.presence).toEqual({
        website: { status: "active", timestamp: expect.any(Number) as number },
        aggregated: { status: "active", timestamp: expect.any(Number) as number },
      });
    }
    const bot = await server.call(
      "GET",
      "/api/v1/users/hamlet-bot@example.com/presence",
      as("othello"),
    );
    expect(bot.body).toEqual(apiError("Presence is not supported for bot users."));
    const nobody = await server.call(
      "GET",
      "/api/v1/users/nobody@example.com/presence",
      as("othello"),
    );
    expect(nobody.body).toEqual(apiError("No such user"));
    const silent = await server.call(
      "GET",
      "/api/v1/users/cordelia@example.com/presence",
      as("othello"),
    );
    expect(silent.body).toEqual(apiError("No presence data for cordelia@example.com"));
  });
});

describe("/api/v1/users/me/alert_words", () => {
  it("adds words once whatever their case, removes them, and tells the user's clients", async () => {
    const events = await listen("cordelia", ["alert_words"]);
    const added = await post("cordelia", "/users/me/alert_words", {
      alert_words: JSON.stringify(["Lear", " storm ", "lear", ""]),
    });
    expect(added.status).toBe(200);
    // (The session file describes GET only; POST and DELETE answer the same shape.)
    expect(validate.alertWords(added.body)).toEqual([]);
    expect(added.body.alert_words).toEqual(["Lear", "storm"]);
    const again = await post("cordelia", "/users/me/alert_words", {
      alert_words: JSON.stringify(["LEAR", "heath"]),
    });
    expect(again.body.alert_words).toEqual(["Lear", "storm", "heath"]);
    const removed = await server.call("DELETE", "/api/v1/users/me/alert_words", {
      ...as("cordelia"),
      form: { alert_words: JSON.stringify(["STORM", "never added"]) },
    });
    expect(validate.alertWords(removed.body)).toEqual([]);
    expect(removed.body.alert_words).toEqual(["Lear", "heath"]);
    const listed = await server.call("GET", "/api/v1/users/me/alert_words", as("cordelia"));
    expect(validate.alertWords(listed.body)).toEqual([]);
    expect(listed.body.alert_words).toEqual(["Lear", "heath"]);
    expect((await events()).map((e) => e.alert_words)).toEqual([
      ["Lear", "storm"],
      ["Lear", "storm", "heath"],
      ["Lear", "heath"],
    ]);
    const state = await post("cordelia", "/register", {
      fetch_event_types: JSON.stringify(["alert_words"]),
    });
    expect(state.body.alert_words).toEqual(["Lear", "heath"]);
  });

  it("refuses a word past 100 characters and stores nothing", async () => {
    const reply = await post("othello", "/users/me/alert_words", {
      alert_words: JSON.stringify(["fine", "x".repeat(101)]),
    });
    expect([reply.status, reply.body]).toEqual([
      400,
      apiError("alert_words is too long (limit: 100 characters)"),
    ]);
    const listed = await server.call("GET", "/api/v1/users/me/alert_words", as("othello"));
    expect(listed.body.alert_words).toEqual([]);
  });
});

describe("POST /api/v1/users/me/status", () => {
  it("sets and clears a status, with user_status events and register's user_status", async () => {
    const events = await listen("othello", ["user_status"]);
    const set = await post("hamlet", "/users/me/status", {
      status_text: "  To be or not  ",
      emoji_name: "thinking",
    });
    expect(set.status).toBe(200);
    expect(validate.status(set.body)).toEqual([]);
    const state = await post("othello", "/register", {
      fetch_event_types: JSON.stringify(["user_status"]),
    });
    expect((state.body.user_status as Record<string, unknown>)[String(id("hamlet"))]).toEqual({
      status_text: "To be or not",
      emoji_name: "thinking",
      emoji_code: "1f914",
      reaction_type: "unicode_emoji",
    });
    // GET /users/{user_id}/status (feature level 262): one user's, as register gives it.
    const one = await server.call(
      "GET",
      `/api/v1/users/${String(id("hamlet"))}/status`,
      as("othello"),
    );
    expect(one.body).toEqual({
      result: "success",
      msg: "",
      status: {
        status_text: "To be or not",
        emoji_name: "thinking",
        emoji_code: "1f914",
        reaction_type: "unicode_emoji",
      },
    });
    const nobody = await server.call("GET", "/api/v1/users/999999/status", as("othello"));
    expect([nobody.status, nobody.body]).toEqual([400, apiError("No such user")]);
    await post("hamlet", "/users/me/status", { status_text: "", emoji_name: "" });
    const cleared = await post("othello", "/register", {
      fetch_event_types: JSON.stringify(["user_status"]),
    });
    expect(cleared.body.user_status).not.toHaveProperty(String(id("hamlet")));
    const none = await server.call(
      "GET",
      `/api/v1/users/${String(id("hamlet"))}/status`,
      as("othello"),
    );
    expect(none.body).toEqual({ result: "success", msg: "", status: {} });
    expect(await events()).toEqual([
      {
        type: "user_status",
        user_id: id("hamlet"),
        status_text: "To be or not",
        emoji_name: "thinking",
        emoji_code: "1f914",
        reaction_type: "unicode_emoji",
      },
      {
        type: "user_status",
        user_id: id("hamlet"),
        status_text: "",
        emoji_name: "",
        emoji_code: "",
        reaction_type: "unicode_emoji",
      },
    ]);
    for (const [form, msg] of [
      [{}, "Client did not pass any new values."],
      [{ emoji_name: "no_such_emoji" }, "Emoji 'no_such_emoji' does not exist"],
      [{ status_text: "x".repeat(61) }, "status_text is too long (limit: 60 characters)"],
    ] as const) {
      const reply = await post("hamlet", "/users/me/status", form);
      expect([reply.status, reply.body]).toEqual([400, apiError(msg)]);
    }
  });
});

describe("PATCH /api/v1/settings", () => {
  const patch = (who: string, form: Record<string, string>) =>
    server.call("PATCH", "/api/v1/settings", { ...as(who), form });

  it("changes settings and the name, with events, and register reflects them", async () => {
    const [mine, theirs] = await Promise.all([
      listen("othello", ["user_settings"]),
      listen("cordelia", ["realm_user"]),
    ]);
    const reply = await patch("othello", {
      enter_sends: "true",
      web_font_size_px: "18",
      emojiset: "text",
      timezone: "Europe/Rome",
      enable_drafts_synchronization: "false",
      full_name: "Othello, General",
    });
    expect(reply.status).toBe(200);
    expect(validate.settings(reply.body)).toEqual([]);
    const changed = (await mine()).map((e) => [e.property, e.value]);
    expect(changed).toHaveLength(5);
    expect(changed).toEqual(
      expect.arrayContaining([
        ["enter_sends", true],
        ["web_font_size_px", 18],
        ["emojiset", "text"],
        ["timezone", "Europe/Rome"],
        ["enable_drafts_synchronization", false],
      ]),
    );
    expect(await theirs()).toEqual([
      {
        type: "realm_user",
        op: "update",
        person: { user_id: id("othello"), full_name: "Othello, General" },
      },
    ]);
    const state = await post("othello", "/register", {
      fetch_event_types: JSON.stringify(["user_settings", "realm_user"]),
    });
    expect(state.body.user_settings).toMatchObject({
      enter_sends: true,
      web_font_size_px: 18,
      emojiset: "text",
      timezone: "Europe/Rome",
      enable_drafts_synchronization: false,
      twenty_four_hour_time: false,
    });
    expect(state.body.full_name).toBe("Othello, General");
    // The same values again change nothing and send nothing.
    expect((await patch("othello", { enter_sends: "true" })).status).toBe(200);
    expect(await mine()).toEqual([]);
  });

  it("refuses a bad value and stores none of the request", async () => {
    for (const [form, msg] of [
      [{ color_scheme: "7" }, "Invalid color_scheme"],
      [{ web_home_view: "everything" }, "Invalid web_home_view"],
      [{ timezone: "Mars/Olympus_Mons" }, "Invalid timezone 'Mars/Olympus_Mons'"],
      [{ full_name: "  " }, "Name too short!"],
      [{ enter_sends: "maybe" }, "enter_sends is not a boolean"],
    ] as const) {
      const reply = await patch("cordelia", { high_contrast_mode: "true", ...form });
      expect([reply.status, reply.body]).toEqual([400, apiError(msg)]);
    }
    const state = await post("cordelia", "/register", {
      fetch_event_types: JSON.stringify(["user_settings"]),
    });
    expect(state.body.user_settings).toMatchObject({ high_contrast_mode: false });
  });
});

describe("a message's history, read receipts, and rendering", () => {
  it("GET /messages/{id}/history: the original, then each edit with what it changed", async () => {
    const sent = await post("hamlet", "/messages", {
      type: "stream",
      to: String(channels.Denmark),
      topic: "history",
      content: "one",
    });
    const messageId = sent.body.id as number;
    const edit = (form: Record<string, string>) =>
      server.call("PATCH", `/api/v1/messages/${messageId}`, { ...as("hamlet"), form });
    expect((await edit({ content: "two" })).status).toBe(200);
    expect((await edit({ topic: "history, moved" })).status).toBe(200);
    expect((await edit({ content: "three", topic: "history, again" })).status).toBe(200);
    const reply = await server.call("GET", `/api/v1/messages/${messageId}/history`, as("othello"));
    expect(reply.status).toBe(200);
    expect(validate.history(reply.body)).toEqual([]);
    const versions = reply.body.message_history as Record<string, unknown>[];
    expect(versions.map((v) => [v.topic, v.content, v.prev_topic, v.prev_content])).toEqual([
      ["history", "one", undefined, undefined],
      ["history", "two", undefined, "one"],
      ["history, moved", "two", "history", undefined],
      ["history, again", "three", "history, moved", "two"],
    ]);
    expect(versions[0]?.user_id).toBe(id("hamlet"));
    expect(versions[3]?.prev_rendered_content).toBe("<p>two</p>");
    const private_ = await post("hamlet", "/messages", {
      type: "direct",
      to: JSON.stringify([id("othello")]),
      content: "between us",
    });
    const stranger = await server.call(
      "GET",
      `/api/v1/messages/${private_.body.id as number}/history`,
      as("cordelia"),
    );
    expect(stranger.body).toEqual(apiError("Invalid message(s)"));
  });

  it("GET /messages/{id}/read_receipts: who read it, not its sender", async () => {
    const sent = await post("hamlet", "/messages", {
      type: "direct",
      to: JSON.stringify([id("othello"), id("cordelia")]),
      content: "did you read this?",
    });
    const messageId = sent.body.id as number;
    await post("othello", "/messages/flags", {
      messages: JSON.stringify([messageId]),
      op: "add",
      flag: "read",
    });
    const reply = await server.call(
      "GET",
      `/api/v1/messages/${messageId}/read_receipts`,
      as("hamlet"),
    );
    expect(reply.status).toBe(200);
    expect(validate.receipts(reply.body)).toEqual([]);
    expect(reply.body.user_ids).toEqual([id("othello")]);
  });

  it("POST /messages/render: the HTML a message would get", async () => {
    const reply = await post("hamlet", "/messages/render", { content: "a < b" });
    expect(validate.render(reply.body)).toEqual([]);
    expect(reply.body.rendered).toBe("<p>a &lt; b</p>");
    const empty = await post("hamlet", "/messages/render", { content: "  " });
    expect(empty.body).toEqual(apiError("Message must not be empty"));
  });
});

describe("PATCH /api/v1/users/me/subscriptions", () => {
  it("joins and leaves channels in one request, and in one transaction", async () => {
    const reply = await server.call("PATCH", "/api/v1/users/me/subscriptions", {
      ...as("cordelia"),
      form: {
        add: JSON.stringify([{ name: "patch-joined" }]),
        delete: JSON.stringify(["Verona"]),
      },
    });
    expect(reply.status).toBe(200);
    expect(validate.updateSubscriptions(reply.body)).toEqual([]);
    expect(reply.body).toEqual({
      result: "success",
      msg: "",
      subscribed: { [String(id("cordelia"))]: ["patch-joined"] },
      already_subscribed: {},
      removed: ["Verona"],
      not_removed: [],
    });
    // A missing channel to leave undoes the join of the same request.
    const refused = await server.call("PATCH", "/api/v1/users/me/subscriptions", {
      ...as("cordelia"),
      form: {
        add: JSON.stringify([{ name: "patch-never" }]),
        delete: JSON.stringify(["no such channel"]),
      },
    });
    expect(refused.body).toMatchObject({ code: "STREAM_DOES_NOT_EXIST" });
    const lookup = await server.call("GET", "/api/v1/get_stream_id", {
      ...as("cordelia"),
      query: { stream: "patch-never" },
    });
    expect(lookup.status).toBe(400);
  });
});

describe("PATCH /api/v1/streams/{stream_id}", () => {
  it("renames, describes and makes private a channel, with stream update events", async () => {
    const made = await post("iago", "/users/me/subscriptions", {
      subscriptions: JSON.stringify([{ name: "to be changed" }]),
      principals: JSON.stringify([id("iago"), id("othello")]),
    });
    expect(made.status).toBe(200);
    const channelId = (
      await server.call("GET", "/api/v1/get_stream_id", {
        ...as("iago"),
        query: { stream: "to be changed" },
      })
    ).body.stream_id as number;
    const queue = await post("othello", "/register", { event_types: JSON.stringify(["stream"]) });
    const reply = await server.call("PATCH", `/api/v1/streams/${channelId}`, {
      ...as("iago"),
      form: {
        new_name: "changed",
        description: "Now <private>",
        is_private: "true",
        can_send_message_group: JSON.stringify({
          new: { direct_members: [id("iago")], direct_subgroups: [] },
        }),
      },
    });
    expect(reply.status).toBe(200);
    expect(validate.updateStream(reply.body)).toEqual([]);
    const events = await server.call("GET", "/api/v1/events", {
      ...as("othello"),
      query: { queue_id: String(queue.body.queue_id), dont_block: "true" },
    });
    expect(validate.events(events.body)).toEqual([]);
    expect(
      (events.body.events as Record<string, unknown>[]).map((e) => [e.property, e.value]),
    ).toEqual([
      ["name", "changed"],
      ["description", "Now <private>"],
      ["invite_only", true],
      ["can_send_message_group", { direct_members: [id("iago")], direct_subgroups: [] }],
    ]);
    const listed = await server.call("GET", `/api/v1/streams/${channelId}`, as("othello"));
    expect(listed.body.stream).toMatchObject({
      name: "changed",
      rendered_description: "<p>Now &lt;private&gt;</p>",
      invite_only: true,
      // Unchanged unless given: the channel's history stays readable to new subscribers.
      history_public_to_subscribers: true,
    });
  });

  it("refuses non-administrators, a taken name, a stale old value", async () => {
    const denmark = channels.Denmark ?? 0;
    const byMember = await server.call("PATCH", `/api/v1/streams/${denmark}`, {
      ...as("hamlet"),
      form: { description: "mine now" },
    });
    expect([byMember.status, byMember.body]).toEqual([400, apiError("Insufficient permission")]);
    const taken = await server.call("PATCH", `/api/v1/streams/${denmark}`, {
      ...as("iago"),
      form: { new_name: "Verona" },
    });
    expect(taken.body).toEqual({
      result: "error",
      msg: "Channel 'Verona' already exists",
      code: "CHANNEL_ALREADY_EXISTS",
    });
    const stale = await server.call("PATCH", `/api/v1/streams/${denmark}`, {
      ...as("iago"),
      form: { can_send_message_group: JSON.stringify({ new: 1, old: 999999 }) },
    });
    expect(stale.body).toEqual(apiError("'old' value does not match the expected value."));
  });

  it("sets retention (owners), folder and topics policy (moderators), with events", async () => {
    const scotland = channels.Scotland ?? 0;
    const folder = await post("desdemona", "/channel_folders/create", { name: "Kingdoms" });
    expect(folder.status).toBe(200);
    const folderId = folder.body.channel_folder_id as number;
    const queue = await listen("othello", ["stream"]);
    const reply = await server.call("PATCH", `/api/v1/streams/${scotland}`, {
      ...as("desdemona"),
      form: {
        message_retention_days: "30",
        folder_id: String(folderId),
        topics_policy: "disable_empty_topic",
      },
    });
    expect(reply.status).toBe(200);
    expect(validate.updateStream(reply.body)).toEqual([]);
    expect((await queue()).map((e) => [e.property, e.value])).toEqual([
      ["message_retention_days", 30],
      ["folder_id", folderId],
      ["topics_policy", "disable_empty_topic"],
    ]);
    const listed = await server.call("GET", `/api/v1/streams/${scotland}`, as("othello"));
    expect(listed.body.stream).toMatchObject({
      message_retention_days: 30,
      folder_id: folderId,
      topics_policy: "disable_empty_topic",
    });
    const general = await post("othello", "/messages", {
      type: "stream",
      to: String(scotland),
      topic: "",
      content: "hi",
    });
    expect(general.body).toEqual(
      apiError("Sending messages to the general chat is not allowed in this channel."),
    );
    const back = await server.call("PATCH", `/api/v1/streams/${scotland}`, {
      ...as("desdemona"),
      form: {
        message_retention_days: JSON.stringify("unlimited"),
        folder_id: "null",
        topics_policy: "inherit",
      },
    });
    expect(back.status).toBe(200);
    expect(
      (await server.call("GET", `/api/v1/streams/${scotland}`, as("othello"))).body.stream,
    ).toMatchObject({ message_retention_days: -1, folder_id: null, topics_policy: "inherit" });
  });

  it("refuses retention from non-owners, topics policy from members, bad values", async () => {
    const verona = channels.Verona ?? 0;
    const cases: [string, Record<string, string>, Record<string, unknown>][] = [
      [
        "iago",
        { message_retention_days: "30" },
        apiError("Must be an organization owner", "UNAUTHORIZED_PRINCIPAL"),
      ],
      [
        "desdemona",
        { message_retention_days: "0" },
        apiError("Bad value for 'message_retention_days': 0"),
      ],
      ["desdemona", { folder_id: "999999" }, apiError("Invalid channel folder ID")],
      ["desdemona", { topics_policy: "anything" }, apiError("Invalid topics_policy")],
    ];
    for (const [who, form, body] of cases) {
      const refused = await server.call("PATCH", `/api/v1/streams/${verona}`, { ...as(who), form });
      expect([who, refused.body]).toEqual([who, body]);
    }
    const row = await server.db.prisma.channel.findUniqueOrThrow({ where: { id: verona } });
    expect([row.message_retention_days, row.folder_id, row.topics_policy]).toEqual([
      null,
      null,
      "inherit",
    ]);
  });
});
