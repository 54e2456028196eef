import { doSetUserActive } from "../src/actions/accounts";
import { createAccount } from "../src/actions/accounts";
import {
  type Person,
  type TestServer,
  createOtherRealm,
  listenAs,
  startTestServer,
} from "./support/server";
import { zulipResponseSchema } from "./support/zulip-schema";

const validate = zulipResponseSchema(
  "subset",
  "/user_groups/{user_group_id}/members/{user_id}",
  "get",
);

let server: TestServer;
let groups: Record<string, number>;
let otherRealmGroup: number;

beforeAll(async () => {
  server = await startTestServer();
  const all = await server.db.prisma.userGroup.findMany({ where: { name: { not: null } } });
  groups = Object.fromEntries(all.map((g) => [g.name ?? "", g.id]));
  // A chain of named groups, top -> mid -> hamletcharacters, to check depth.
  const realm = await server.db.prisma.realm.findFirstOrThrow();
  const mid = await server.db.prisma.userGroup.create({
    data: { realm_id: realm.id, name: "mid" },
  });
  const top = await server.db.prisma.userGroup.create({
    data: { realm_id: realm.id, name: "top" },
  });
  await server.db.prisma.userGroupSubgroup.createMany({
    data: [
      { supergroup_id: top.id, subgroup_id: mid.id },
      { supergroup_id: mid.id, subgroup_id: groups.hamletcharacters ?? 0 },
    ],
  });
  groups.mid = mid.id;
  groups.top = top.id;
  otherRealmGroup = (await createOtherRealm(server)).groups["role:everyone"];
});

afterAll(() => server.close());

async function check(
  caller: Person,
  groupId: number,
  userId: number,
  query?: Record<string, unknown>,
) {
  return server.call("GET", `/api/v1/user_groups/${groupId}/members/${userId}`, {
    auth: [caller.email, caller.apiKey],
    ...(query === undefined ? {} : { query }),
  });
}

describe("GET /api/v1/user_groups/{user_group_id}/members/{user_id}", () => {
  it.each([
    ["hamletcharacters", "cordelia", undefined, true],
    ["hamletcharacters", "othello", undefined, false],
    ["top", "cordelia", undefined, true],
    ["top", "cordelia", { direct_member_only: true }, false],
    ["mid", "hamlet", { direct_member_only: false }, true],
    ["role:administrators", "desdemona", undefined, true],
    ["role:administrators", "desdemona", { direct_member_only: true }, false],
    ["role:members", "polonius", undefined, false],
    ["role:everyone", "polonius", undefined, true],
    ["role:members", "hamlet-bot", undefined, true],
    ["role:nobody", "desdemona", undefined, false],
  ])("%s has %s (%j): %s", async (group, who, query, member) => {
    const caller = await server.person("iago");
    const target = await server.person(who);
    const reply = await check(caller, groups[group] ?? 0, target.id, query);
    expect(reply.status).toBe(200);
    expect(validate(reply.body)).toEqual([]);
    expect(reply.body).toEqual({ result: "success", msg: "", is_user_group_member: member });
  });

  it.each(["desdemona", "iago", "prospero", "othello", "polonius", "hamlet-bot"])(
    "answers %s",
    async (who) => {
      const reply = await check(
        await server.person(who),
        groups.hamletcharacters ?? 0,
        (await server.person("hamlet")).id,
      );
      expect(reply.body).toEqual({ result: "success", msg: "", is_user_group_member: true });
    },
  );

  it("does not count deactivated users", async () => {
    const cordelia = await server.person("cordelia");
    await doSetUserActive(server.services, cordelia.id, false);
    try {
      const reply = await check(
        await server.person("iago"),
        groups.hamletcharacters ?? 0,
        cordelia.id,
      );
      expect(reply.body.is_user_group_member).toBe(false);
    } finally {
      await doSetUserActive(server.services, cordelia.id, true);
    }
  });

  it("answers Invalid user group for an unknown group and another realm's group", async () => {
    const iago = await server.person("iago");
    for (const id of [999_999, otherRealmGroup]) {
      const reply = await check(iago, id, iago.id);
      expect([reply.status, reply.body]).toEqual([
        400,
        { result: "error", msg: "Invalid user group", code: "BAD_REQUEST" },
      ]);
    }
  });

  it("answers No such user for an unknown user and another realm's user", async () => {
    const iago = await server.person("iago");
    const stranger = await server.db.transaction(async (tx) => {
      const realm = await tx.prisma.realm.findUniqueOrThrow({ where: { subdomain: "lear" } });
      return createAccount(tx, {
        realmId: realm.id,
        email: "regan@example.com",
        fullName: "Regan",
      });
    });
    for (const id of [999_999, stranger.id]) {
      const reply = await check(iago, groups.hamletcharacters ?? 0, id);
      expect(reply.body).toEqual({ result: "error", msg: "No such user", code: "BAD_REQUEST" });
    }
  });

  it("rejects a direct_member_only that is not a boolean", async () => {
    const iago = await server.person("iago");
    const reply = await check(iago, groups.top ?? 0, iago.id, { direct_member_only: "maybe" });
    expect(reply.body).toEqual({
      result: "error",
      msg: "direct_member_only is not a boolean",
      code: "BAD_REQUEST",
    });
  });
});

describe("POST /api/v1/user_groups/{user_group_id}/members", () => {
  const validateUpdate = zulipResponseSchema(
    "session",
    "/user_groups/{user_group_id}/members",
    "post",
  );
  const members = async (groupId: number) =>
    (
      await server.db.prisma.userGroupMember.findMany({
        where: { group_id: groupId },
        orderBy: { user_id: "asc" },
      })
    ).map((m) => m.user_id);

  it("adds and removes members and subgroups in one change, with events to the realm", async () => {
    const hamlet = await server.person("hamlet");
    const othello = await server.person("othello");
    const cordelia = await server.person("cordelia");
    const made = await server.call("POST", "/api/v1/user_groups/create", {
      auth: [hamlet.email, hamlet.apiKey],
      form: { name: "Crew", description: "", members: JSON.stringify([hamlet.id]) },
    });
    const crew = made.body.group_id as number;
    const listen = await listenAs(server, { auth: [othello.email, othello.apiKey] }, [
      "user_group",
    ]);
    const reply = await server.call("POST", `/api/v1/user_groups/${crew}/members`, {
      auth: [hamlet.email, hamlet.apiKey],
      form: {
        add: JSON.stringify([othello.id, cordelia.id]),
        delete: JSON.stringify([hamlet.id]),
        add_subgroups: JSON.stringify([groups.mid]),
      },
    });
    expect(reply.status).toBe(200);
    expect(validateUpdate(reply.body)).toEqual([]);
    expect(await members(crew)).toEqual([othello.id, cordelia.id].sort((a, b) => a - b));
    expect(await listen()).toEqual([
      {
        type: "user_group",
        op: "add_members",
        group_id: crew,
        user_ids: [othello.id, cordelia.id],
      },
      { type: "user_group", op: "remove_members", group_id: crew, user_ids: [hamlet.id] },
      {
        type: "user_group",
        op: "add_subgroups",
        group_id: crew,
        direct_subgroup_ids: [groups.mid],
      },
    ]);
  });

  it("refuses members already in it, users not in it, unknown users, and changes nothing", async () => {
    const hamlet = await server.person("hamlet");
    const othello = await server.person("othello");
    const made = await server.call("POST", "/api/v1/user_groups/create", {
      auth: [hamlet.email, hamlet.apiKey],
      form: { name: "Solo", description: "", members: JSON.stringify([hamlet.id]) },
    });
    const solo = made.body.group_id as number;
    const post = (form: Record<string, string>) =>
      server.call("POST", `/api/v1/user_groups/${solo}/members`, {
        auth: [hamlet.email, hamlet.apiKey],
        form,
      });
    for (const [form, msg] of [
      [{ add: JSON.stringify([hamlet.id]) }, `User ${hamlet.id} is already a member of this group`],
      [
        { delete: JSON.stringify([othello.id]) },
        `There is no member '${othello.id}' in this user group`,
      ],
      [{ add: JSON.stringify([othello.id, 99_999]) }, "Invalid user ID: 99999"],
      [
        {},
        'Nothing to do. Specify at least one of "add", "delete", "add_subgroups" or "delete_subgroups".',
      ],
    ] as const) {
      const reply = await post(form);
      expect([reply.status, reply.body.msg]).toEqual([400, msg]);
    }
    expect(await members(solo)).toEqual([hamlet.id]);
    // Othello may not change a group he does not manage.
    const denied = await server.call("POST", `/api/v1/user_groups/${solo}/members`, {
      auth: [othello.email, othello.apiKey],
      form: { add: JSON.stringify([othello.id]) },
    });
    expect([denied.status, denied.body.msg]).toEqual([400, "Insufficient permission"]);
    expect(await members(solo)).toEqual([hamlet.id]);
  });

  it("refuses another realm's users and groups, and ids past int32, changing nothing", async () => {
    const hamlet = await server.person("hamlet");
    const made = await server.call("POST", "/api/v1/user_groups/create", {
      auth: [hamlet.email, hamlet.apiKey],
      form: { name: "Guarded", description: "", members: JSON.stringify([hamlet.id]) },
    });
    const guarded = made.body.group_id as number;
    const outsider = await server.db.prisma.user.findFirstOrThrow({
      where: { email: "edmund@example.com" },
    });
    const post = (groupId: number | string, form: Record<string, string>) =>
      server.call("POST", `/api/v1/user_groups/${groupId}/members`, {
        auth: [hamlet.email, hamlet.apiKey],
        form,
      });
    const foreignUser = await post(guarded, { add: JSON.stringify([outsider.id]) });
    expect([foreignUser.status, foreignUser.body.msg]).toEqual([
      400,
      `Invalid user ID: ${outsider.id}`,
    ]);
    const foreignGroup = await post(otherRealmGroup, { add: JSON.stringify([hamlet.id]) });
    expect([foreignGroup.status, foreignGroup.body.msg]).toEqual([400, "Invalid user group"]);
    const huge = await post(guarded, { add: "[2147483648]" });
    expect(huge.status).toBe(400);
    const tooMany = await post(guarded, {
      add: JSON.stringify(Array.from({ length: 1001 }, (_, i) => i + 1)),
    });
    expect(tooMany.status).toBe(400);
    expect(await members(guarded)).toEqual([hamlet.id]);
  });
});

describe("GET /api/v1/user_groups/{user_group_id}/members and /subgroups", () => {
  const get = async (path: string, query?: Record<string, unknown>) => {
    const hamlet = await server.person("hamlet");
    return server.call("GET", `/api/v1/user_groups/${path}`, {
      auth: [hamlet.email, hamlet.apiKey],
      ...(query === undefined ? {} : { query }),
    });
  };

  it("lists members through subgroups, or direct ones only", async () => {
    const hamlet = await server.person("hamlet");
    const cordelia = await server.person("cordelia");
    const through = await get(`${String(groups.top)}/members`);
    expect(through.body).toEqual({
      result: "success",
      msg: "",
      members: [hamlet.id, cordelia.id].sort((a, b) => a - b),
    });
    const direct = await get(`${String(groups.top)}/members`, { direct_member_only: "true" });
    expect(direct.body).toEqual({ result: "success", msg: "", members: [] });
  });

  it("lists subgroups recursively, or direct ones only", async () => {
    const all = await get(`${String(groups.top)}/subgroups`);
    expect(all.body).toEqual({
      result: "success",
      msg: "",
      subgroups: [groups.mid ?? 0, groups.hamletcharacters ?? 0].sort((a, b) => a - b),
    });
    const direct = await get(`${String(groups.top)}/subgroups`, { direct_subgroup_only: "true" });
    expect(direct.body).toEqual({ result: "success", msg: "", subgroups: [groups.mid] });
  });

  it("answers another realm's group and an unknown one as invalid", async () => {
    for (const path of [`${String(otherRealmGroup)}/members`, "999999/subgroups"]) {
      const reply = await get(path);
      expect([reply.status, reply.body]).toEqual([
        400,
        { result: "error", msg: "Invalid user group", code: "BAD_REQUEST" },
      ]);
    }
  });
});
