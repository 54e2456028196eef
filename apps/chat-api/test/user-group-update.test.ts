import { type TestServer, apiError, authOf, listenAs, startTestServer } from "./support/server";
import { fullEventsSchema, zulipResponseSchema } from "./support/zulip-schema";

/**
 * PATCH /user_groups/{user_group_id}: a group's name, description and
 * permission settings, by those who manage it, with Zulip's checks and one
 * `user_group` `update` event per property, each checked against Zulip
 * 10.2's whole API document.
 */
let server: TestServer;
let ids: Record<string, number>;
const fullEvents = fullEventsSchema();
const simpleSuccess = zulipResponseSchema("full", "/user_groups/{user_group_id}", "patch");

beforeAll(async () => {
  server = await startTestServer();
  const groups = await server.db.prisma.userGroup.findMany({
    where: { name: { not: null }, realm: { subdomain: "" } },
  });
  ids = Object.fromEntries(groups.map((g) => [g.name ?? "", g.id]));
});
afterAll(() => server.close());

const id = (name: string): number => {
  const found = ids[name];
  if (found === undefined) throw new Error(name);
  return found;
};

const patch = async (who: string, groupId: number, form: Record<string, string>) =>
  server.call("PATCH", `/api/v1/user_groups/${groupId}`, {
    ...authOf(await server.person(who)),
    form,
  });

const row = (groupId: number) =>
  server.db.prisma.userGroup.findUniqueOrThrow({ where: { id: groupId } });

it("renames a group, describes it and changes who may mention it, telling the realm", async () => {
  const group = id("hamletcharacters");
  const listen = await listenAs(server, authOf(await server.person("othello")), ["user_group"]);
  const reply = await patch("iago", group, {
    name: "Elsinore",
    description: "The people of the castle",
    can_mention_group: JSON.stringify({ new: id("role:members"), old: id("role:everyone") }),
  });
  expect(reply.body).toEqual({ result: "success", msg: "" });
  expect(simpleSuccess(reply.body)).toEqual([]);
  const events = await listen();
  expect(fullEvents({ events: events.map((e, n) => ({ id: n, ...e })) })).toEqual([]);
  expect(events).toEqual([
    { type: "user_group", op: "update", group_id: group, data: { name: "Elsinore" } },
    {
      type: "user_group",
      op: "update",
      group_id: group,
      data: { description: "The people of the castle" },
    },
    {
      type: "user_group",
      op: "update",
      group_id: group,
      data: { can_mention_group: id("role:members") },
    },
  ]);
  const stored = await row(group);
  expect([stored.name, stored.description, stored.can_mention_group_id]).toEqual([
    "Elsinore",
    "The people of the castle",
    id("role:members"),
  ]);
  // The same values again: nothing changes and nobody is told.
  expect((await patch("iago", group, { name: "Elsinore" })).status).toBe(200);
  expect(await listen()).toEqual([]);
});

it("sets a permission to a set of people, stored as an anonymous group", async () => {
  const group = id("hamletcharacters");
  const hamlet = await server.person("hamlet");
  const reply = await patch("iago", group, {
    can_manage_group: JSON.stringify({
      new: { direct_members: [hamlet.id], direct_subgroups: [id("role:moderators")] },
    }),
  });
  expect(reply.status).toBe(200);
  const stored = await row(group);
  const setting = await server.db.prisma.userGroup.findUniqueOrThrow({
    where: { id: stored.can_manage_group_id ?? 0 },
    include: { members: true, subgroups: true },
  });
  expect(setting.name).toBeNull();
  expect(setting.members.map((m) => m.user_id)).toEqual([hamlet.id]);
  expect(setting.subgroups.map((s) => s.subgroup_id)).toEqual([id("role:moderators")]);
  // Hamlet manages it now, and may rename it.
  expect((await patch("hamlet", group, { name: "Players" })).status).toBe(200);
  expect((await row(group)).name).toBe("Players");
});

it("refuses what Zulip refuses, changing nothing", async () => {
  const group = id("hamletcharacters");
  const before = await row(group);
  const cases: [string, number, Record<string, string>, ReturnType<typeof apiError>][] = [
    ["iago", group, {}, apiError("No new data supplied")],
    ["othello", group, { name: "Mine" }, apiError("Insufficient permission")],
    ["iago", id("role:members"), { name: "Everyone" }, apiError("Insufficient permission")],
    ["iago", 999_999, { name: "Nobody's" }, apiError("Invalid user group")],
    ["iago", group, { name: "role:kings" }, apiError("User group name cannot start with 'role:'.")],
    ["iago", group, { name: "   " }, apiError("User group name can't be empty!")],
    [
      "iago",
      group,
      { name: "x".repeat(101) },
      apiError("User group name cannot exceed 100 characters."),
    ],
    [
      "iago",
      group,
      {
        description: "Changed",
        can_join_group: JSON.stringify({ new: id("role:members"), old: id("role:owners") }),
      },
      apiError("'old' value does not match the expected value."),
    ],
  ];
  for (const [who, target, form, answer] of cases)
    expect([who, form, (await patch(who, target, form)).body]).toEqual([who, form, answer]);
  const guest = await patch("polonius", group, { name: "Spies" });
  expect(guest.body.msg).toBe("Not allowed for guest users");
  expect(await row(group)).toEqual(before);
});

it("refuses a name another group has", async () => {
  const created = await server.call("POST", "/api/v1/user_groups/create", {
    ...authOf(await server.person("iago")),
    form: { name: "Gravediggers", description: "", members: "[]" },
  });
  const groupId = created.body.group_id as number;
  const reply = await patch("iago", groupId, { name: "Players" });
  expect(reply.body).toEqual(apiError("User group 'Players' already exists."));
  expect((await row(groupId)).name).toBe("Gravediggers");
});
