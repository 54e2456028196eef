import { type Person, type TestServer, createOtherRealm, startTestServer } from "./support/server";
import { zulipResponseSchema } from "./support/zulip-schema";

const validate = zulipResponseSchema("subset", "/user_groups/{user_group_id}/subgroups", "post");

let server: TestServer;
let g: Record<string, number>;
let otherRealmGroup: number;

async function group(name: string, extra: Record<string, number> = {}): Promise<number> {
  const realm = await server.db.prisma.realm.findFirstOrThrow();
  const nobody = await server.db.prisma.userGroup.findFirstOrThrow({
    where: { name: "role:nobody" },
  });
  const created = await server.db.prisma.userGroup.create({
    data: {
      realm_id: realm.id,
      name,
      can_manage_group_id: nobody.id,
      can_add_members_group_id: nobody.id,
      can_remove_members_group_id: nobody.id,
      ...extra,
    },
  });
  return created.id;
}

beforeAll(async () => {
  server = await startTestServer();
  const named = await server.db.prisma.userGroup.findMany({ where: { name: { not: null } } });
  g = Object.fromEntries(named.map((x) => [x.name ?? "", x.id]));
  g.a = await group("a");
  g.b = await group("b");
  g.c = await group("c");
  // hamlet may add to "hamlet-adds" (can_add_members_group = hamletcharacters) but not remove.
  g["hamlet-adds"] = await group("hamlet-adds", {
    can_add_members_group_id: g.hamletcharacters ?? 0,
  });
  otherRealmGroup = (await createOtherRealm(server)).groups["role:everyone"];
});

afterAll(() => server.close());

const update = async (who: string, groupId: number, form: Record<string, unknown>) => {
  const person: Person = await server.person(who);
  return server.call("POST", `/api/v1/user_groups/${groupId}/subgroups`, {
    auth: [person.email, person.apiKey],
    form,
  });
};
const subgroupsOf = async (id: number) =>
  (
    await server.db.prisma.userGroupSubgroup.findMany({
      where: { supergroup_id: id },
      orderBy: { subgroup_id: "asc" },
    })
  ).map((s) => s.subgroup_id);
const error = (msg: string) => ({ result: "error", msg, code: "BAD_REQUEST" });

describe("POST /api/v1/user_groups/{user_group_id}/subgroups", () => {
  it("adds and removes in one call, for an administrator", async () => {
    const added = await update("iago", g.a ?? 0, { add: [g.b, g.c] });
    expect(validate(added.body)).toEqual([]);
    expect(added.body).toEqual({ result: "success", msg: "" });
    expect(await subgroupsOf(g.a ?? 0)).toEqual([g.b, g.c]);
    const both = await update("iago", g.a ?? 0, { add: [g.hamletcharacters], delete: [g.c] });
    expect(both.status).toBe(200);
    expect(await subgroupsOf(g.a ?? 0)).toEqual(
      [g.b, g.hamletcharacters].sort((x, y) => (x ?? 0) - (y ?? 0)),
    );
  });

  it("lets a member of the group's can_add_members_group add, but not remove", async () => {
    expect((await update("hamlet", g["hamlet-adds"] ?? 0, { add: [g.c] })).status).toBe(200);
    expect((await update("cordelia", g["hamlet-adds"] ?? 0, { delete: [g.c] })).body).toEqual(
      error("Insufficient permission"),
    );
    expect((await update("othello", g["hamlet-adds"] ?? 0, { add: [g.b] })).body).toEqual(
      error("Insufficient permission"),
    );
  });

  it("accepts bots with permission (feature level 496)", async () => {
    const bot = await server.db.prisma.user.findFirstOrThrow({
      where: { email: "hamlet-bot@example.com" },
    });
    await server.db.prisma.userGroupMember.create({
      data: { group_id: g.hamletcharacters ?? 0, user_id: bot.id },
    });
    expect((await update("hamlet-bot", g["hamlet-adds"] ?? 0, { add: [g.b] })).status).toBe(200);
  });

  it.each<[string, () => [number, Record<string, unknown>, string]]>([
    [
      "nothing to do",
      () => [g.b ?? 0, {}, 'Nothing to do. Specify at least one of "add" or "delete".'],
    ],
    ["an unknown group", () => [999_999, { add: [g.b] }, "Invalid user group"]],
    ["another realm's group", () => [otherRealmGroup, { add: [g.b] }, "Invalid user group"]],
    ["an unknown subgroup", () => [g.b ?? 0, { add: [999_998] }, "Invalid user group ID: 999998"]],
    [
      "another realm's subgroup",
      () => [g.b ?? 0, { add: [otherRealmGroup] }, `Invalid user group ID: ${otherRealmGroup}`],
    ],
    [
      "a subgroup already there",
      () => [g.a ?? 0, { add: [g.b] }, `User group ${g.b} is already a subgroup of this group.`],
    ],
    [
      "a direct cycle",
      () => [
        g.b ?? 0,
        { add: [g.a] },
        `User group ${g.b} is already a subgroup of one of the passed subgroups.`,
      ],
    ],
    [
      "the group itself",
      () => [
        g.c ?? 0,
        { add: [g.c] },
        `User group ${g.c} is already a subgroup of one of the passed subgroups.`,
      ],
    ],
    [
      "removing a group that is not a subgroup",
      () => [g.a ?? 0, { delete: [g.c] }, `User group ${g.c} is not a subgroup of this group.`],
    ],
    ["a system group", () => [g["role:members"] ?? 0, { add: [g.b] }, "Insufficient permission"]],
  ])("refuses %s, changing nothing", async (_what, make) => {
    const [id, form, msg] = make();
    const before = await server.db.prisma.userGroupSubgroup.count();
    const reply = await update("iago", id, form);
    expect([reply.status, reply.body]).toEqual([400, error(msg)]);
    expect(await server.db.prisma.userGroupSubgroup.count()).toBe(before);
  });

  it("finds a cycle through the whole graph", async () => {
    // a -> b already; c -> a would make a -> b ... and c -> a -> ... fine; b -> c -> a -> b is a cycle.
    expect((await update("iago", g.c ?? 0, { add: [g.a] })).status).toBe(200);
    const reply = await update("iago", g.b ?? 0, { add: [g.c] });
    expect(reply.body).toEqual(
      error(`User group ${g.b} is already a subgroup of one of the passed subgroups.`),
    );
  });

  it("applies nothing when one half of a call fails", async () => {
    const before = await subgroupsOf(g.a ?? 0);
    const fresh = await group("d");
    const reply = await update("iago", g.a ?? 0, {
      add: [fresh],
      delete: [g["role:everyone"]],
    });
    expect(reply.body).toEqual(
      error(`User group ${g["role:everyone"]} is not a subgroup of this group.`),
    );
    expect(await subgroupsOf(g.a ?? 0)).toEqual(before);
  });

  it("can change the subgroups of a deactivated group (feature level 391)", async () => {
    await server.db.prisma.userGroup.update({
      where: { id: g["hamlet-adds"] },
      data: { deactivated: true },
    });
    expect((await update("iago", g["hamlet-adds"] ?? 0, { delete: [g.b] })).status).toBe(200);
  });

  it.each(["prospero", "othello", "polonius"])("refuses %s without permission", async (who) => {
    expect((await update(who, g.b ?? 0, { add: [g["role:members"]] })).body).toEqual(
      error("Insufficient permission"),
    );
  });
});
