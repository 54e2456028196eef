import {
  type Cast,
  type TestServer,
  loadCast,
  startTestServer,
  channelIds,
} from "./support/server";
import { zulipResponseSchema } from "./support/zulip-schema";

/**
 * Each operation that changes what a client shows sends the events Zulip
 * sends for the same change, to the users who can see it; every event body
 * validates against the companions file.
 */
const validateEvents = zulipResponseSchema("companions", "/events", "get");

let server: TestServer;
let cast: Cast;
let groups: Record<string, number>;
let channels: Record<string, number>;

beforeAll(async () => {
  server = await startTestServer();
  cast = await loadCast(server, ["desdemona", "iago", "hamlet", "othello", "polonius"]);
  const groupRows = await server.db.prisma.userGroup.findMany({ where: { name: { not: null } } });
  groups = Object.fromEntries(groupRows.map((g) => [g.name ?? "", g.id]));
  channels = await channelIds(server);
});

afterAll(() => server.close());

const as = (who: string) => cast.as(who);

/** Registers a queue for `who` receiving `types`; `drain()` answers what arrived since. */
async function listen(who: string, types: string[]) {
  const reply = await server.call("POST", "/api/v1/register", {
    ...as(who),
    form: { event_types: types },
  });
  const queueId = reply.body.queue_id as string;
  return async (): Promise<Record<string, unknown>[]> => {
    const events = await server.call("GET", "/api/v1/events", {
      ...as(who),
      query: { queue_id: queueId, dont_block: true },
    });
    expect(validateEvents(events.body)).toEqual([]);
    return events.body.events as Record<string, unknown>[];
  };
}

it("user_topic when a topic is muted and unmuted", async () => {
  const drain = await listen("hamlet", ["user_topic"]);
  const form = { stream_id: channels.Denmark, topic: "ghosts" };
  await server.call("PATCH", "/api/v1/users/me/subscriptions/muted_topics", {
    ...as("hamlet"),
    form: { ...form, op: "add" },
  });
  await server.call("PATCH", "/api/v1/users/me/subscriptions/muted_topics", {
    ...as("hamlet"),
    form: { ...form, op: "remove" },
  });
  expect(await drain()).toMatchObject([
    { type: "user_topic", stream_id: channels.Denmark, topic_name: "ghosts", visibility_policy: 1 },
    { type: "user_topic", stream_id: channels.Denmark, topic_name: "ghosts", visibility_policy: 0 },
  ]);
});

it("stream create and delete, to those who can see the channel", async () => {
  const member = await listen("othello", ["stream"]);
  const guest = await listen("polonius", ["stream"]);
  const created = await server.call("POST", "/api/v1/channels/create", {
    ...as("iago"),
    form: { name: "Rialto", subscribers: [cast.id("iago")] },
  });
  const id = created.body.id as number;
  await server.call("DELETE", `/api/v1/streams/${id}`, as("iago"));
  const events = await member();
  expect(events).toMatchObject([
    { type: "stream", op: "create", streams: [{ stream_id: id, name: "Rialto" }] },
    { type: "stream", op: "delete", stream_ids: [id] },
  ]);
  expect(await guest()).toEqual([]);
});

it("a private channel's creation goes to its subscribers and administrators only", async () => {
  const admin = await listen("desdemona", ["stream"]);
  const outsider = await listen("othello", ["stream"]);
  await server.call("POST", "/api/v1/channels/create", {
    ...as("hamlet"),
    form: { name: "Closet", subscribers: [cast.id("hamlet")], invite_only: true },
  });
  expect(await admin()).toMatchObject([{ type: "stream", op: "create" }]);
  expect(await outsider()).toEqual([]);
});

it("user_group add, add_subgroups and remove_subgroups", async () => {
  const drain = await listen("othello", ["user_group"]);
  const created = await server.call("POST", "/api/v1/user_groups/create", {
    ...as("iago"),
    form: { name: "players", description: "The players", members: [cast.id("hamlet")] },
  });
  const groupId = created.body.group_id as number;
  const path = `/api/v1/user_groups/${groupId}/subgroups`;
  await server.call("POST", path, { ...as("iago"), form: { add: [groups.hamletcharacters] } });
  await server.call("POST", path, { ...as("iago"), form: { delete: [groups.hamletcharacters] } });
  expect(await drain()).toMatchObject([
    { type: "user_group", op: "add", group: { id: groupId, name: "players" } },
    {
      type: "user_group",
      op: "add_subgroups",
      group_id: groupId,
      direct_subgroup_ids: [groups.hamletcharacters],
    },
    {
      type: "user_group",
      op: "remove_subgroups",
      group_id: groupId,
      direct_subgroup_ids: [groups.hamletcharacters],
    },
  ]);
});

it("realm_linkifiers with the whole list after an add, a reorder and a removal", async () => {
  const drain = await listen("othello", ["realm_linkifiers"]);
  const added = await server.call("POST", "/api/v1/realm/filters", {
    ...as("iago"),
    form: { pattern: "T-(?P<id>\\d+)", url_template: "https://example.com/{id}" },
  });
  const ids = (
    (await server.call("GET", "/api/v1/realm/linkifiers", as("iago"))).body.linkifiers as {
      id: number;
    }[]
  ).map((l) => l.id);
  await server.call("PATCH", "/api/v1/realm/linkifiers", {
    ...as("iago"),
    form: { ordered_linkifier_ids: [...ids].reverse() },
  });
  await server.call("DELETE", `/api/v1/realm/filters/${String(added.body.id)}`, as("iago"));
  const events = await drain();
  expect(events.map((e) => (e.realm_linkifiers as { id: number }[]).map((l) => l.id))).toEqual([
    ids,
    [...ids].reverse(),
    [...ids].reverse().filter((id) => id !== added.body.id),
  ]);
});

it("custom_profile_fields after a creation and a reorder", async () => {
  const drain = await listen("othello", ["custom_profile_fields"]);
  await server.call("POST", "/api/v1/realm/profile_fields", {
    ...as("iago"),
    form: { name: "Motto", field_type: 1 },
  });
  const fields = (await server.call("GET", "/api/v1/realm/profile_fields", as("iago"))).body
    .custom_fields as { id: number }[];
  await server.call("PATCH", "/api/v1/realm/profile_fields", {
    ...as("iago"),
    form: { order: fields.map((f) => f.id).reverse() },
  });
  const events = await drain();
  expect(events).toHaveLength(2);
  expect((events[0]?.fields as { name: string }[]).map((f) => f.name)).toContain("Motto");
  expect((events[1]?.fields as { id: number }[]).map((f) => f.id)).toEqual(
    fields.map((f) => f.id).reverse(),
  );
});

it("realm_bot update with the new key, to the bot's owner", async () => {
  const drain = await listen("hamlet", ["realm_bot"]);
  const bystander = await listen("othello", ["realm_bot"]);
  const bot = await server.db.prisma.user.findFirstOrThrow({
    where: { email: "hamlet-bot@example.com" },
  });
  const reply = await server.call(
    "POST",
    `/api/v1/bots/${bot.id}/api_key/regenerate`,
    as("hamlet"),
  );
  expect((await drain()).map(({ id: _id, ...event }) => event)).toEqual([
    { type: "realm_bot", op: "update", bot: { user_id: bot.id, api_key: reply.body.api_key } },
  ]);
  expect(await bystander()).toEqual([]);
});
