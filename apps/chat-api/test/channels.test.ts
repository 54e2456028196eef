import { defaultChannelGroups } from "../src/actions/realm-creation";
import {
  type Person,
  type TestServer,
  createOtherRealm,
  startTestServer,
  channelIds,
  authOf,
} from "./support/server";
import { zulipResponseSchema } from "./support/zulip-schema";

const validateArchive = zulipResponseSchema("subset", "/streams/{stream_id}", "delete");
const validateMute = zulipResponseSchema("subset", "/users/me/subscriptions/muted_topics", "patch");

let server: TestServer;
let channels: Record<string, number>;
let otherRealmChannel: number;
let outsider: Person;

beforeAll(async () => {
  server = await startTestServer();
  channels = await channelIds(server);
  const other = await createOtherRealm(server);
  outsider = other.outsider;
  const heath = await server.db.prisma.channel.create({
    data: { realm_id: other.realmId, name: "Heath", ...defaultChannelGroups(other.groups) },
  });
  otherRealmChannel = heath.id;
});

afterAll(() => server.close());

const as = authOf;
const error = (msg: string) => ({ result: "error", msg, code: "BAD_REQUEST" });

describe("DELETE /api/v1/streams/{stream_id}", () => {
  const archive = async (who: string, id: number) =>
    server.call("DELETE", `/api/v1/streams/${id}`, as(await server.person(who)));

  it("archives a channel for an administrator, keeping its data", async () => {
    const before = await server.db.prisma.message.count({
      where: { channel_id: channels.Scotland },
    });
    const reply = await archive("iago", channels.Scotland ?? 0);
    expect(validateArchive(reply.body)).toEqual([]);
    expect(reply.body).toEqual({ result: "success", msg: "" });
    const channel = await server.db.prisma.channel.findUniqueOrThrow({
      where: { id: channels.Scotland },
    });
    expect([channel.is_archived, channel.is_default_stream]).toEqual([true, false]);
    expect(await server.db.prisma.message.count({ where: { channel_id: channels.Scotland } })).toBe(
      before,
    );
    expect(
      await server.db.prisma.subscription.count({ where: { channel_id: channels.Scotland } }),
    ).toBe(7);
  });

  it("says so when the channel is archived already", async () => {
    expect((await archive("desdemona", channels.Scotland ?? 0)).body).toEqual(
      error("Channel is already deactivated"),
    );
  });

  it.each([
    ["prospero", "Denmark", "You do not have permission to administer this channel."],
    ["hamlet", "Denmark", "You do not have permission to administer this channel."],
    ["hamlet", "core team", "You do not have permission to administer this channel."],
    ["hamlet-bot", "Denmark", "You do not have permission to administer this channel."],
    ["othello", "core team", "Invalid channel ID"],
    ["polonius", "core team", "Invalid channel ID"],
    ["polonius", "Denmark", "You do not have permission to administer this channel."],
  ])("refuses %s on %s: %s", async (who, name, msg) => {
    const reply = await archive(who, channels[name] ?? 0);
    expect([reply.status, reply.body]).toEqual([400, error(msg)]);
    expect(
      (await server.db.prisma.channel.findUniqueOrThrow({ where: { id: channels[name] } }))
        .is_archived,
    ).toBe(false);
  });

  it("answers Invalid channel ID for an unknown channel and another realm's", async () => {
    for (const id of [999_999, otherRealmChannel]) {
      expect((await archive("iago", id)).body).toEqual(error("Invalid channel ID"));
    }
  });

  it("lets an administrator archive a private channel they are not subscribed to", async () => {
    const owner = await server.db.prisma.user.findFirstOrThrow({
      where: { email: "desdemona@example.com" },
    });
    await server.db.prisma.subscription.deleteMany({
      where: { user_id: owner.id, channel_id: channels["core team"] },
    });
    expect((await archive("desdemona", channels["core team"] ?? 0)).status).toBe(200);
  });

  it("answers 401 to a user of another realm", async () => {
    const reply = await server.call("DELETE", `/api/v1/streams/${channels.Denmark}`, as(outsider));
    expect(reply.status).toBe(401);
  });
});

describe("PATCH /api/v1/users/me/subscriptions/muted_topics", () => {
  const mute = async (who: string, form: Record<string, unknown>) =>
    server.call("PATCH", "/api/v1/users/me/subscriptions/muted_topics", {
      ...as(await server.person(who)),
      form,
    });
  const muted = async (who: string) => {
    const person = await server.person(who);
    const rows = await server.db.prisma.userTopic.findMany({
      where: { user_id: person.id },
      orderBy: { id: "asc" },
    });
    return rows.map((r) => [r.channel_id, r.topic_name, r.visibility_policy]);
  };

  it("mutes by channel id and by name, idempotently and case-insensitively", async () => {
    const first = await mute("hamlet", { stream_id: channels.Denmark, topic: "castle", op: "add" });
    expect(validateMute(first.body)).toEqual([]);
    expect(first.body).toEqual({ result: "success", msg: "" });
    expect((await mute("hamlet", { stream: "denmark", topic: "CASTLE", op: "add" })).status).toBe(
      200,
    );
    expect(await muted("hamlet")).toEqual([[channels.Denmark, "castle", 1]]);
  });

  it("unmutes, idempotently", async () => {
    expect(
      (await mute("hamlet", { stream_id: channels.Denmark, topic: "Castle", op: "remove" })).status,
    ).toBe(200);
    expect(await muted("hamlet")).toEqual([]);
    expect(
      (await mute("hamlet", { stream_id: channels.Denmark, topic: "Castle", op: "remove" })).status,
    ).toBe(200);
  });

  it("lets the caller use any channel they can access, subscribed or not", async () => {
    const person = await server.person("othello");
    await server.db.prisma.subscription.deleteMany({
      where: { user_id: person.id, channel_id: channels.Verona },
    });
    expect(
      (await mute("othello", { stream_id: channels.Verona, topic: "plans", op: "add" })).status,
    ).toBe(200);
  });

  it.each<[string, Record<string, unknown>, Record<string, unknown>]>([
    ["neither channel field", { topic: "t", op: "add" }, error("Missing 'stream_id' argument")],
    [
      "both channel fields",
      { stream_id: 1, stream: "Denmark", topic: "t", op: "add" },
      {
        ...error("Unsupported parameter combination: stream_id, stream"),
        parameters: "stream_id, stream",
      },
    ],
    [
      "an inaccessible channel on add",
      { stream_id: 999_999, topic: "t", op: "add" },
      error("Invalid channel ID"),
    ],
    [
      "a private channel of others on add",
      { stream: "core team", topic: "t", op: "add" },
      error("Invalid channel name 'core team'"),
    ],
    [
      "an unknown name on add",
      { stream: "Atlantis", topic: "t", op: "add" },
      error("Invalid channel name 'Atlantis'"),
    ],
    [
      "an inaccessible channel on remove",
      { stream: "core team", topic: "t", op: "remove" },
      error("Topic is not muted"),
    ],
    ["a bad op", { stream_id: 1, topic: "t", op: "toggle" }, error("Invalid op")],
    [
      "a topic that is too long",
      { stream_id: 1, topic: "x".repeat(61), op: "add" },
      error("topic is too long (limit: 60 characters)"),
    ],
    [
      "a missing topic",
      { stream_id: 1, op: "add" },
      {
        result: "error",
        msg: "Missing 'topic' argument",
        code: "REQUEST_VARIABLE_MISSING",
        var_name: "topic",
      },
    ],
  ])("refuses %s", async (_what, form, expected) => {
    const reply = await mute("othello", form);
    expect([reply.status, reply.body]).toEqual([400, expect.objectContaining(expected)]);
    expect(reply.body).toEqual(expected);
  });

  it("refuses another realm's channel", async () => {
    const reply = await server.call("PATCH", "/api/v1/users/me/subscriptions/muted_topics", {
      ...as(outsider),
      host: "lear.chat.test",
      form: { stream_id: channels.Denmark, topic: "t", op: "add" },
    });
    expect(reply.body).toEqual(error("Invalid channel ID"));
    const own = await server.call("PATCH", "/api/v1/users/me/subscriptions/muted_topics", {
      ...as(outsider),
      host: "lear.chat.test",
      form: { stream_id: otherRealmChannel, topic: "t", op: "add" },
    });
    expect(own.status).toBe(200);
  });

  it("is marked deprecated in the OpenAPI document", async () => {
    const doc = await server.call("GET", "/api/v1/openapi.json");
    const paths = doc.body.paths as Record<string, Record<string, { deprecated: boolean }>>;
    expect(paths["/users/me/subscriptions/muted_topics"]?.patch?.deprecated).toBe(true);
  });
});
