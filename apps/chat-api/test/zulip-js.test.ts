import zulipInit from "zulip-js";
import { DEMO_PASSWORD } from "../src/cli/demo-data";
import { type Cast, type TestServer, loadCast, startTestServer } from "./support/server";
import { zulipResponseSchema } from "./support/zulip-schema";

/**
 * Zulip's JavaScript client, zulip-js 2.1.0 from npm, unchanged, against the
 * demo realm over real HTTP: it logs in with a password and calls every one
 * of its methods (accounts, streams, messages, queues, events, users, emojis,
 * typing, reactions, server, filters). Its multipart POST bodies, an empty
 * one included, and its query strings are its own.
 */
const validate = {
  messages: zulipResponseSchema("companions", "/messages", "get"),
  topics: zulipResponseSchema("session", "/users/me/{stream_id}/topics", "get"),
  streamId: zulipResponseSchema("session", "/get_stream_id", "get"),
  emoji: zulipResponseSchema("session", "/realm/emoji", "get"),
};

let server: TestServer;
let cast: Cast;
let client: Awaited<ReturnType<typeof zulipInit>>;

beforeAll(async () => {
  server = await startTestServer();
  cast = await loadCast(server, ["hamlet", "othello", "iago"]);
  // An IP address as the host selects the root realm: the demo realm.
  client = await zulipInit({
    realm: server.url,
    username: "hamlet@example.com",
    password: DEMO_PASSWORD,
  });
});

afterAll(() => server.close());

const succeeded = (reply: { result: string; msg: string }) =>
  expect([reply.result, reply.msg]).toEqual(["success", ""]);

describe("zulip-js 2.1.0", () => {
  it("logs in with a password (POST /fetch_api_key, multipart)", () => {
    expect(client.config.apiKey).toBe(cast.person("hamlet").apiKey);
  });

  it("reads the server, the user, the people and the channels", async () => {
    const settings = await client.server.settings();
    succeeded(settings);
    expect(typeof settings.zulip_version).toBe("string");
    const me = await client.users.me.getProfile();
    succeeded(me);
    expect(me.user_id).toBe(cast.id("hamlet"));
    const users = await client.users.retrieve();
    succeeded(users);
    expect((users.members as { user_id: number }[]).map((u) => u.user_id)).toContain(
      cast.id("othello"),
    );
    const streams = await client.streams.retrieve();
    succeeded(streams);
    const id = await client.streams.getStreamId("Denmark");
    expect(validate.streamId(id)).toEqual([]);
    expect(streams.streams as { stream_id: number; name: string }[]).toContainEqual(
      expect.objectContaining({ name: "Denmark", stream_id: id.stream_id }),
    );
    const subscriptions = await client.streams.subscriptions.retrieve();
    succeeded(subscriptions);
    const topics = await client.streams.topics.retrieve({ stream_id: id.stream_id });
    expect(validate.topics(topics)).toEqual([]);
    const emoji = await client.emojis.retrieve();
    expect(validate.emoji(emoji)).toEqual([]);
    const alertWords = await client.users.me.alertWords.retrieve();
    succeeded(alertWords);
    expect(alertWords.alert_words).toEqual([]);
    const filters = await client.filters.retrieve();
    succeeded(filters);
    expect((filters.filters as unknown[]).length).toBeGreaterThan(0);
  });

  it("subscribes, sends to a channel and a person, and reads the messages back by narrow", async () => {
    succeeded(
      await client.users.me.subscriptions.add({
        subscriptions: JSON.stringify([{ name: "zulip-js" }]),
      }),
    );
    const toChannel = await client.messages.send({
      type: "stream",
      to: "zulip-js",
      topic: "client",
      content: "from zulip-js",
    });
    succeeded(toChannel);
    const toPerson = await client.messages.send({
      type: "private",
      to: [cast.id("othello")],
      content: "a word, othello",
    });
    succeeded(toPerson);
    const channel = await client.messages.retrieve({
      anchor: "newest",
      num_before: 10,
      num_after: 0,
      narrow: [
        { operator: "stream", operand: "zulip-js" },
        { operator: "topic", operand: "client" },
      ],
    });
    expect(validate.messages(channel)).toEqual([]);
    expect((channel.messages as { id: number }[]).map((m) => m.id)).toEqual([toChannel.id]);
    const direct = await client.messages.retrieve({
      anchor: "newest",
      num_before: 10,
      num_after: 0,
      narrow: [{ operator: "pm-with", operand: "othello@example.com" }],
    });
    expect(validate.messages(direct)).toEqual([]);
    expect((direct.messages as { id: number }[]).map((m) => m.id)).toEqual([toPerson.id]);
  });

  it("stars a message and takes the star back (messages.flags)", async () => {
    const sent = await client.messages.send({
      type: "private",
      to: [cast.id("othello")],
      content: "worth a star",
    });
    succeeded(await client.messages.flags.add({ flag: "starred", messages: [sent.id] }));
    const starred = await client.messages.retrieve({
      anchor: "newest",
      num_before: 5,
      num_after: 0,
      narrow: [{ operator: "is", operand: "starred" }],
    });
    expect((starred.messages as { id: number }[]).map((m) => m.id)).toEqual([sent.id]);
    succeeded(await client.messages.flags.remove({ flag: "starred", messages: [sent.id] }));
    const none = await client.messages.retrieve({
      anchor: "newest",
      num_before: 5,
      num_after: 0,
      narrow: [{ operator: "is", operand: "starred" }],
    });
    expect(none.messages).toEqual([]);
  });

  it("types, fetches a message by id, and leaves a channel", async () => {
    succeeded(await client.typing.send({ op: "start", to: [cast.id("othello")] }));
    succeeded(
      await client.typing.send({ op: "stop", to: ["othello@example.com", "iago@example.com"] }),
    );
    const sent = await client.messages.send({
      type: "private",
      to: [cast.id("othello")],
      content: "fetch me",
    });
    const one = await client.messages.getById({ message_id: sent.id });
    succeeded(one);
    expect(one.raw_content).toBe("fetch me");
    succeeded(await client.reactions.add({ message_id: sent.id, emoji_name: "tada" }));
    const reacted = await client.messages.getById({ message_id: sent.id });
    expect((reacted.message as { reactions: { emoji_name: string }[] }).reactions).toEqual([
      expect.objectContaining({ emoji_name: "tada" }),
    ]);
    succeeded(await client.reactions.remove({ message_id: sent.id, emoji_name: "tada" }));
    succeeded(await client.reactions.add({ message_id: sent.id, emoji_name: "octopus" }));
    succeeded(
      await client.messages.deleteReactionById({ message_id: sent.id, emoji_name: "octopus" }),
    );
    succeeded(await client.messages.update({ message_id: sent.id, content: "fetched" }));
    expect((await client.messages.getById({ message_id: sent.id })).raw_content).toBe("fetched");
    const history = await client.messages.getHistoryById({ message_id: sent.id });
    succeeded(history);
    expect((history.message_history as { content: string }[]).map((v) => v.content)).toEqual([
      "fetch me",
      "fetched",
    ]);
    const rendered = await client.messages.render("**bold**");
    succeeded(rendered);
    expect(typeof rendered.rendered).toBe("string");
    succeeded(await client.messages.deleteById({ message_id: sent.id }));
    expect((await client.messages.getById({ message_id: sent.id })).result).toBe("error");
    succeeded(
      await client.users.me.subscriptions.add({
        subscriptions: JSON.stringify([{ name: "zulip-js leaving" }]),
      }),
    );
    const left = await client.users.me.subscriptions.remove({
      subscriptions: JSON.stringify(["zulip-js leaving"]),
    });
    succeeded(left);
    expect(left.removed).toEqual(["zulip-js leaving"]);
  });

  it("registers a queue, receives an event, and deletes the queue", async () => {
    const queue = await client.queues.register({ event_types: ["message"] });
    succeeded(queue);
    const sent = await client.messages.send({
      type: "private",
      to: [cast.id("hamlet")],
      content: "a note to myself",
    });
    const events = await client.events.retrieve({
      queue_id: queue.queue_id,
      last_event_id: -1,
      dont_block: true,
    });
    succeeded(events);
    expect(events.events).toEqual([
      expect.objectContaining({
        type: "message",
        message: expect.objectContaining({ id: sent.id }) as unknown,
      }),
    ]);
    succeeded(await client.queues.deregister({ queue_id: queue.queue_id }));
  });

  it("calls an endpoint by name: POST /mark_all_as_read with an empty multipart body", async () => {
    const reply = await client.callEndpoint("/mark_all_as_read", "POST");
    succeeded(reply);
  });

  it("archives a channel as an administrator (streams.deleteById)", async () => {
    const admin = await zulipInit({
      realm: server.url,
      username: "iago@example.com",
      apiKey: cast.person("iago").apiKey,
    });
    const { stream_id: id } = await admin.streams.getStreamId("zulip-js");
    succeeded(await admin.streams.deleteById({ stream_id: id }));
    const after = await admin.streams.retrieve();
    const names = (after.streams as { name: string }[]).map((c) => c.name);
    expect(names).toContain("Denmark");
    expect(names).not.toContain("zulip-js");
  });

  it("fetches its key again (accounts.retrieve) and moves the legacy pointer (users.me.pointer)", async () => {
    const key = await client.accounts.retrieve();
    expect([key.result, key.api_key]).toEqual(["success", cast.person("hamlet").apiKey]);
    const start = await client.users.me.pointer.retrieve();
    succeeded(start);
    const newest = await client.messages.retrieve({
      anchor: "newest",
      num_before: 1,
      num_after: 0,
    });
    const [last] = newest.messages as { id: number }[];
    succeeded(await client.users.me.pointer.update(last?.id ?? 0));
    const moved = await client.users.me.pointer.retrieve();
    expect(moved.pointer).toBe(last?.id);
  });

  it("creates a user as the owner, who holds the server-granted permission (users.create)", async () => {
    const owner = await zulipInit({
      realm: server.url,
      username: "desdemona@example.com",
      password: DEMO_PASSWORD,
    });
    const created = await owner.users.create({
      email: "ophelia@example.com",
      password: "rosemary-for-remembrance",
      full_name: "Ophelia",
    });
    succeeded(created);
    const people = await owner.users.retrieve();
    expect(people.members as { user_id: number; email: string }[]).toContainEqual(
      expect.objectContaining({ user_id: created.user_id, email: "ophelia@example.com" }),
    );
  });
});
