/**
 * Who may post where (POST /messages to a channel): the channel by id or by
 * name, its visibility, archiving, `can_send_message_group` and
 * `can_create_topic_group` (both through subgroups), the topics policy.
 * These checks are one statement (`channelPosting`); each case here is one of
 * its answers, and a refused send stores nothing.
 */
import {
  apiError,
  type Cast,
  channelMissing,
  createOtherRealm,
  loadCast,
  startTestServer,
  type TestServer,
} from "./support/server";

let server: TestServer;
let cast: Cast;
let groups: Record<string, number>;

const PEOPLE = ["desdemona", "iago", "hamlet", "othello", "cordelia", "polonius"];

beforeAll(async () => {
  server = await startTestServer({ env: { CHAT_RATE_LIMIT: "off" } });
  cast = await loadCast(server, PEOPLE);
  const rows = await server.db.prisma.userGroup.findMany({ where: { name: { not: null } } });
  groups = Object.fromEntries(rows.map((g) => [g.name ?? "", g.id]));
});

afterAll(() => server.close());

const post = (who: string, path: string, form: Record<string, unknown>) =>
  server.call("POST", `/api/v1${path}`, { ...cast.as(who), form });

const send = (who: string, to: number | string, topic: string, content = "Words") =>
  post(who, "/messages", { type: "stream", to: String(to), topic, content });

async function createChannel(form: Record<string, unknown>): Promise<number> {
  const reply = await post("desdemona", "/channels/create", form);
  expect(reply.status).toBe(200);
  return reply.body.id as number;
}

const messageCount = () => server.db.prisma.message.count();

/** Expects `reply` to be the error `msg`, and the message count unchanged since `before`. */
async function refused(
  reply: { status: number; body: unknown },
  msg: string | ReturnType<typeof channelMissing>,
  before: number,
) {
  expect(reply.status).toBe(400);
  expect(reply.body).toEqual(typeof msg === "string" ? apiError(msg) : msg);
  expect(await messageCount()).toBe(before);
}

describe("POST /messages to a channel: who may post", () => {
  it("lets only members of can_send_message_group post, subgroups included", async () => {
    // hamletcharacters (hamlet, cordelia) as a subgroup of the setting's group.
    const channel = await createChannel({
      name: "Battlements",
      subscribers: PEOPLE.map((who) => cast.id(who)),
      can_send_message_group: {
        direct_members: [cast.id("polonius")],
        direct_subgroups: [groups.hamletcharacters],
      },
    });
    const before = await messageCount();
    await refused(
      await send("othello", channel, "watch"),
      "You do not have permission to post in this channel.",
      before,
    );
    for (const who of ["hamlet", "polonius"]) {
      const reply = await send(who, channel, "watch");
      expect(reply.status).toBe(200);
    }
    expect(await messageCount()).toBe(before + 2);
  });

  it("lets only can_create_topic_group start a topic; anyone may post to one that exists, in any case", async () => {
    const channel = await createChannel({
      name: "Ramparts",
      subscribers: PEOPLE.map((who) => cast.id(who)),
      can_create_topic_group: { direct_members: [], direct_subgroups: [groups.hamletcharacters] },
    });
    const before = await messageCount();
    await refused(
      await send("othello", channel, "The ghost"),
      "You do not have permission to create new topics in this channel.",
      before,
    );
    expect((await send("cordelia", channel, "The ghost")).status).toBe(200);
    expect((await send("othello", channel, "THE GHOST")).status).toBe(200);
    expect(await messageCount()).toBe(before + 2);
  });

  it("finds a channel by name case-insensitively, and names an unknown one as it was asked", async () => {
    const channel = await createChannel({ name: "Orchard", subscribers: [cast.id("hamlet")] });
    const reply = await send("hamlet", "oRcHaRd", "apples");
    expect(reply.status).toBe(200);
    const stored = await server.db.prisma.message.findUniqueOrThrow({
      where: { id: reply.body.id as number },
    });
    expect(stored.channel_id).toBe(channel);
    const before = await messageCount();
    await refused(await send("hamlet", "Nowhere", "t"), channelMissing("Nowhere"), before);
    await refused(await send("hamlet", 999_999, "t"), channelMissing(999_999), before);
  });

  it("answers a private channel as missing to whoever may not see it, and refuses an administrator who is not subscribed", async () => {
    const channel = await createChannel({
      name: "Closet",
      subscribers: [cast.id("desdemona"), cast.id("hamlet")],
      invite_only: true,
    });
    const before = await messageCount();
    await refused(await send("othello", channel, "t"), channelMissing(channel), before);
    await refused(await send("othello", "Closet", "t"), channelMissing("Closet"), before);
    await refused(
      await send("iago", channel, "t"),
      "Not authorized to send to channel 'Closet'",
      before,
    );
    expect((await send("hamlet", channel, "t")).status).toBe(200);
  });

  it("refuses an archived channel and one of another realm", async () => {
    const channel = await createChannel({ name: "Attic", subscribers: [cast.id("hamlet")] });
    const archived = await server.call(
      "DELETE",
      `/api/v1/streams/${String(channel)}`,
      cast.as("desdemona"),
    );
    expect(archived.status).toBe(200);
    const before = await messageCount();
    await refused(
      await send("hamlet", channel, "t"),
      "Not authorized to send to channel 'Attic'",
      before,
    );
    const lear = await createOtherRealm(server);
    const foreign = await server.db.prisma.channel.create({
      data: {
        realm_id: lear.realmId,
        name: "Heath",
        can_add_subscribers_group_id: lear.groups["role:everyone"],
        can_administer_channel_group_id: lear.groups["role:everyone"],
        can_create_topic_group_id: lear.groups["role:everyone"],
        can_delete_any_message_group_id: lear.groups["role:everyone"],
        can_delete_own_message_group_id: lear.groups["role:everyone"],
        can_move_messages_out_of_channel_group_id: lear.groups["role:everyone"],
        can_move_messages_within_channel_group_id: lear.groups["role:everyone"],
        can_remove_subscribers_group_id: lear.groups["role:everyone"],
        can_resolve_topics_group_id: lear.groups["role:everyone"],
        can_send_message_group_id: lear.groups["role:everyone"],
        can_subscribe_group_id: lear.groups["role:everyone"],
      },
    });
    await refused(await send("hamlet", foreign.id, "t"), channelMissing(foreign.id), before);
    await refused(await send("hamlet", "Heath", "t"), channelMissing("Heath"), before);
  });

  it("applies the topics policy before the topic permission", async () => {
    const channel = await createChannel({
      name: "Chapel",
      subscribers: [cast.id("othello")],
      topics_policy: "empty_topic_only",
      can_create_topic_group: groups["role:nobody"],
    });
    const before = await messageCount();
    await refused(
      await send("othello", channel, "a topic"),
      "Only the general chat topic is allowed in this channel.",
      before,
    );
    await refused(
      await send("othello", channel, ""),
      "You do not have permission to create new topics in this channel.",
      before,
    );
  });
});
