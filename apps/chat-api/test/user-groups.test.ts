import { doSetUserActive } from "../src/actions/accounts";
import { type Person, type TestServer, startTestServer } from "./support/server";
import { zulipResponseSchema } from "./support/zulip-schema";

const validateList = zulipResponseSchema("companions", "/user_groups", "get");
const validateCreate = zulipResponseSchema("companions", "/user_groups/create", "post");

let server: TestServer;
let ids: Record<string, number>;

beforeAll(async () => {
  server = await startTestServer();
  const groups = await server.db.prisma.userGroup.findMany({ where: { name: { not: null } } });
  ids = Object.fromEntries(groups.map((g) => [g.name ?? "", g.id]));
});

afterAll(() => server.close());

const as = async (who: string) => {
  const person: Person = await server.person(who);
  return { auth: [person.email, person.apiKey] as const };
};
const list = async (who = "hamlet", query?: Record<string, unknown>) =>
  server.call("GET", "/api/v1/user_groups", {
    ...(await as(who)),
    ...(query === undefined ? {} : { query }),
  });
type Group = {
  id: number;
  name: string;
  members: number[];
  direct_subgroup_ids: number[];
  [key: string]: unknown;
};
const named = async (name: string, who = "hamlet") =>
  ((await list(who)).body.user_groups as Group[]).find((g) => g.name === name);

describe("GET /api/v1/user_groups", () => {
  it("lists system and named groups, valid against Zulip's schema", async () => {
    const reply = await list();
    expect(reply.status).toBe(200);
    expect(validateList(reply.body)).toEqual([]);
    const groups = reply.body.user_groups as Group[];
    expect(groups.map((g) => g.name)).toEqual(
      expect.arrayContaining(["role:owners", "role:nobody", "hamletcharacters"]),
    );
    const characters = groups.find((g) => g.name === "hamletcharacters");
    const hamlet = await server.person("hamlet");
    const cordelia = await server.person("cordelia");
    expect(characters).toMatchObject({
      members: [hamlet.id, cordelia.id].sort((a, b) => a - b),
      direct_subgroup_ids: [],
      is_system_group: false,
      can_mention_group: ids["role:everyone"],
      deactivated: false,
    });
    expect(groups.find((g) => g.name === "role:administrators")).toMatchObject({
      direct_subgroup_ids: [ids["role:owners"]],
      date_created: null,
      creator_id: null,
      is_system_group: true,
    });
  });
});

describe("POST /api/v1/user_groups/create", () => {
  it("creates a group with members, subgroups and default settings; the list shows it", async () => {
    const othello = await server.person("othello");
    const hamlet = await server.person("hamlet");
    const reply = await server.call("POST", "/api/v1/user_groups/create", {
      ...(await as("hamlet")),
      form: {
        name: "Moors",
        description: "Venetians",
        members: [othello.id],
        subgroups: [ids.hamletcharacters],
      },
    });
    expect(reply.status).toBe(200);
    expect(validateCreate(reply.body)).toEqual([]);
    const group = await named("Moors");
    expect(group).toMatchObject({
      id: reply.body.group_id,
      description: "Venetians",
      creator_id: hamlet.id,
      members: [othello.id],
      direct_subgroup_ids: [ids.hamletcharacters],
      can_manage_group: { direct_members: [hamlet.id], direct_subgroups: [] },
      can_mention_group: ids["role:everyone"],
      can_join_group: ids["role:nobody"],
    });
    expect(typeof group?.date_created).toBe("number");
  });

  it("stores settings given as a group id or as a set of users and groups", async () => {
    const iago = await server.person("iago");
    const polonius = await server.person("polonius");
    const reply = await server.call("POST", "/api/v1/user_groups/create", {
      ...(await as("iago")),
      form: {
        name: "Counsellors",
        description: "",
        members: [],
        can_mention_group: ids["role:administrators"],
        can_join_group: {
          direct_members: [iago.id, polonius.id],
          direct_subgroups: [ids["role:moderators"]],
        },
        can_leave_group: { direct_members: [], direct_subgroups: [ids["role:members"]] },
      },
    });
    expect(reply.status).toBe(200);
    const group = await named("Counsellors");
    expect(group).toMatchObject({
      can_mention_group: ids["role:administrators"],
      can_join_group: {
        direct_members: [iago.id, polonius.id].sort((a, b) => a - b),
        direct_subgroups: [ids["role:moderators"]],
      },
      // One subgroup and no users: the subgroup itself, as Zulip stores it.
      can_leave_group: ids["role:members"],
    });
    expect(validateList((await list()).body)).toEqual([]);
  });

  it("drops deactivated users from a setting's set", async () => {
    const cordelia = await server.person("cordelia");
    const othello = await server.person("othello");
    await doSetUserActive(server.services, cordelia.id, false);
    try {
      const reply = await server.call("POST", "/api/v1/user_groups/create", {
        ...(await as("iago")),
        form: {
          name: "Messengers",
          description: "",
          members: [],
          can_manage_group: { direct_members: [cordelia.id, othello.id], direct_subgroups: [] },
        },
      });
      expect(reply.status).toBe(200);
      expect((await named("Messengers"))?.can_manage_group).toEqual({
        direct_members: [othello.id],
        direct_subgroups: [],
      });
    } finally {
      await doSetUserActive(server.services, cordelia.id, true);
    }
  });

  it.each<[string, (p: Record<string, number>) => Record<string, unknown>, string]>([
    [
      "a taken name",
      () => ({ name: "hamletcharacters", description: "", members: [] }),
      "User group 'hamletcharacters' already exists.",
    ],
    [
      "an unknown member",
      () => ({ name: "X1", description: "", members: [999_999] }),
      "Invalid user ID: 999999",
    ],
    [
      "an unknown subgroup",
      () => ({ name: "X2", description: "", members: [], subgroups: [999_998] }),
      "Invalid user group ID: 999998",
    ],
    [
      "an unknown setting group",
      () => ({ name: "X3", description: "", members: [], can_join_group: 999_997 }),
      "Invalid user group",
    ],
    [
      "a setting set with an unknown user",
      () => ({
        name: "X4",
        description: "",
        members: [],
        can_join_group: { direct_members: [999_996], direct_subgroups: [] },
      }),
      "Invalid user ID: 999996",
    ],
    [
      "a setting object with an extra key",
      () => ({
        name: "X5",
        description: "",
        members: [],
        can_join_group: { direct_members: [], direct_subgroups: [], x: 1 },
      }),
      'Argument "x" at can_join_group is unexpected',
    ],
    ["a blank name", () => ({ name: "  ", description: "", members: [] }), "name cannot be blank"],
    [
      "a long name",
      () => ({ name: "n".repeat(101), description: "", members: [] }),
      "name is too long (limit: 100 characters)",
    ],
  ])("refuses %s, creating nothing", async (_what, form, msg) => {
    const before = await server.db.prisma.userGroup.count();
    const reply = await server.call("POST", "/api/v1/user_groups/create", {
      ...(await as("iago")),
      form: form(ids),
    });
    expect([reply.status, reply.body]).toEqual([
      400,
      { result: "error", msg, code: "BAD_REQUEST" },
    ]);
    expect(await server.db.prisma.userGroup.count()).toBe(before);
  });

  it("refuses guests", async () => {
    const reply = await server.call("POST", "/api/v1/user_groups/create", {
      ...(await as("polonius")),
      form: { name: "Spies", description: "", members: [] },
    });
    expect(reply.body).toEqual({
      result: "error",
      msg: "Not allowed for guest users",
      code: "BAD_REQUEST",
    });
  });

  it("follows the realm's can_create_groups setting", async () => {
    const realm = await server.db.prisma.realm.findFirstOrThrow();
    await server.db.prisma.realm.update({
      where: { id: realm.id },
      data: { can_create_groups_id: ids["role:administrators"] },
    });
    try {
      const member = await server.call("POST", "/api/v1/user_groups/create", {
        ...(await as("othello")),
        form: { name: "Generals", description: "", members: [] },
      });
      expect(member.body).toEqual({
        result: "error",
        msg: "Insufficient permission",
        code: "BAD_REQUEST",
      });
      const admin = await server.call("POST", "/api/v1/user_groups/create", {
        ...(await as("iago")),
        form: { name: "Generals", description: "", members: [] },
      });
      expect(admin.status).toBe(200);
    } finally {
      await server.db.prisma.realm.update({
        where: { id: realm.id },
        data: { can_create_groups_id: ids["role:members"] },
      });
    }
  });
});
