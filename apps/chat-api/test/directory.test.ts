import {
  type Cast,
  type Person,
  type TestServer,
  apiError,
  createOtherRealm,
  loadCast,
  startTestServer,
} from "./support/server";
import { zulipResponseSchema } from "./support/zulip-schema";

const validateUsers = zulipResponseSchema("companions", "/users", "get");
const validateMe = zulipResponseSchema("companions", "/users/me", "get");
const validateDeactivate = zulipResponseSchema(
  "companions",
  "/user_groups/{user_group_id}/deactivate",
  "post",
);
const validateGroups = zulipResponseSchema("companions", "/user_groups", "get");

let server: TestServer;
let cast: Cast;
let groups: Record<string, number>;
let outsider: Person;

beforeAll(async () => {
  server = await startTestServer();
  cast = await loadCast(server, [
    "desdemona",
    "iago",
    "prospero",
    "hamlet",
    "cordelia",
    "polonius",
    "hamlet-bot",
  ]);
  const rows = await server.db.prisma.userGroup.findMany({ where: { name: { not: null } } });
  groups = Object.fromEntries(rows.map((g) => [g.name ?? "", g.id]));
  ({ outsider } = await createOtherRealm(server));
});

afterAll(() => server.close());

const as = (who: string) => cast.as(who);
const id = (who: string) => cast.id(who);

const error = apiError;

describe("GET /api/v1/users", () => {
  it("lists the realm's users and bots, delivery emails for administrators only", async () => {
    const member = await server.call("GET", "/api/v1/users", as("hamlet"));
    expect(member.status).toBe(200);
    expect(validateUsers(member.body)).toEqual([]);
    const members = member.body.members as Record<string, unknown>[];
    expect(members).toHaveLength(9);
    expect(members.map((m) => m.email)).not.toContain(outsider.email);
    expect(members.find((m) => m.user_id === id("cordelia"))).toMatchObject({
      email: "cordelia@example.com",
      delivery_email: null,
      avatar_url: null,
      is_admin: false,
      role: 400,
    });
    expect(members.find((m) => m.user_id === id("hamlet"))?.delivery_email).toBe(
      "hamlet@example.com",
    );
    expect(members.find((m) => m.user_id === id("hamlet-bot"))).toMatchObject({
      is_bot: true,
      bot_type: 1,
      bot_owner_id: id("hamlet"),
    });
    const admin = await server.call("GET", "/api/v1/users", {
      ...as("iago"),
      query: { client_gravatar: false, include_custom_profile_fields: true },
    });
    expect(validateUsers(admin.body)).toEqual([]);
    const cordelia = (admin.body.members as Record<string, unknown>[]).find(
      (m) => m.user_id === id("cordelia"),
    );
    expect(cordelia?.delivery_email).toBe("cordelia@example.com");
    expect(cordelia?.avatar_url).toMatch(/^https:\/\/secure\.gravatar\.com\/avatar\/[0-9a-f]{32}/);
    expect(cordelia?.profile_data).toEqual({});
  });
});

describe("POST /api/v1/bots", () => {
  const create = (who: string, form: Record<string, unknown>) =>
    server.call("POST", "/api/v1/bots", { ...as(who), form });

  it("creates a bot owned by the caller, whose key works at once", async () => {
    const reply = await create("cordelia", {
      full_name: "Cordelia's helper",
      short_name: "helper",
    });
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({
      result: "success",
      default_sending_stream: null,
      default_events_register_stream: null,
      default_all_public_streams: false,
    });
    expect(typeof reply.body.user_id).toBe("number");
    expect(reply.body.api_key).toMatch(/^[A-Za-z0-9]{32}$/);
    const me = await server.call("GET", "/api/v1/users/me", {
      auth: ["helper-bot@chat.test", reply.body.api_key as string],
    });
    expect(validateMe(me.body)).toEqual([]);
    expect(me.body).toMatchObject({
      user_id: reply.body.user_id,
      full_name: "Cordelia's helper",
      is_bot: true,
    });
    const users = await server.call("GET", "/api/v1/users", as("hamlet"));
    expect(users.body.members).toContainEqual(
      expect.objectContaining({
        user_id: reply.body.user_id,
        email: "helper-bot@chat.test",
        bot_owner_id: id("cordelia"),
      }),
    );
  });

  it("compares names and usernames as written: `_` and `%` are no wildcards", async () => {
    const first = await create("cordelia", { full_name: "PatternXbot 100", short_name: "patxa" });
    expect(first.status).toBe(200);
    // As LIKE patterns these would match the first bot's name and address.
    const second = await create("cordelia", { full_name: "Pattern_bot 100%", short_name: "pat_a" });
    expect(second.body).toMatchObject({ result: "success" });
    const other = await create("cordelia", { full_name: "Pattern_bot%", short_name: "other_a" });
    expect(other.body).toMatchObject({ result: "success" });
    const same = await create("cordelia", { full_name: "Another", short_name: "PAT_A" });
    expect(same.body).toMatchObject({ result: "error", msg: "Username already in use" });
  });

  it.each([
    [{ full_name: "A", short_name: "helper" }, "Username already in use"],
    [{ full_name: "Cordelia's helper", short_name: "other" }, "Name is already in use!"],
    [{ full_name: " ", short_name: "blank" }, "Name too short!"],
    [{ full_name: "x".repeat(101), short_name: "long" }, "Name too long!"],
    [{ full_name: "Bad", short_name: "no spaces" }, "Bad name or username"],
    [{ full_name: "Typed", short_name: "typed", bot_type: 9 }, "Invalid bot type"],
    [{ short_name: "x" }, "Missing 'full_name' argument"],
  ])("refuses %j: %s", async (form, msg) => {
    const before = await server.db.prisma.user.count();
    const reply = await create("cordelia", form);
    expect([reply.status, reply.body.msg]).toEqual([400, msg]);
    expect(await server.db.prisma.user.count()).toBe(before);
  });

  it("refuses guests (not in can_create_bots_group) and bots", async () => {
    const guest = await create("polonius", { full_name: "G", short_name: "g" });
    expect(guest.body).toEqual(error("Insufficient permission"));
    const bot = await create("hamlet-bot", { full_name: "B", short_name: "b" });
    expect(bot.body).toEqual(error("This endpoint does not accept bot requests."));
  });
});

describe("POST /api/v1/channel_folders/create and GET /api/v1/channel_folders", () => {
  it("creates folders in order, usable as a channel's folder_id", async () => {
    const first = await server.call("POST", "/api/v1/channel_folders/create", {
      ...as("iago"),
      form: { name: "Plays", description: "By title" },
    });
    expect(first.status).toBe(200);
    expect(Object.keys(first.body)).toEqual(["result", "msg", "channel_folder_id"]);
    expect(typeof first.body.channel_folder_id).toBe("number");
    const second = await server.call("POST", "/api/v1/channel_folders/create", {
      ...as("desdemona"),
      form: { name: "Poems" },
    });
    const listed = await server.call("GET", "/api/v1/channel_folders", as("hamlet"));
    expect(listed.body.channel_folders).toEqual([
      expect.objectContaining({
        id: first.body.channel_folder_id,
        name: "Plays",
        description: "By title",
        rendered_description: "<p>By title</p>",
        creator_id: id("iago"),
        is_archived: false,
      }),
      expect.objectContaining({ id: second.body.channel_folder_id, name: "Poems" }),
    ]);
    const channel = await server.call("POST", "/api/v1/channels/create", {
      ...as("hamlet"),
      form: {
        name: "Sonnets",
        subscribers: [id("hamlet")],
        folder_id: second.body.channel_folder_id,
      },
    });
    const view = await server.call(
      "GET",
      `/api/v1/streams/${String(channel.body.id)}`,
      as("hamlet"),
    );
    expect((view.body.stream as Record<string, unknown>).folder_id).toBe(
      second.body.channel_folder_id,
    );
  });

  it.each([
    ["plays", "Channel folder name already in use"],
    [" ", "Channel folder name can't be empty."],
    ["x".repeat(61), "Channel folder name too long (limit: 60 characters)."],
  ])("refuses the name %j: %s", async (name, msg) => {
    const reply = await server.call("POST", "/api/v1/channel_folders/create", {
      ...as("iago"),
      form: { name },
    });
    expect(reply.body).toEqual(error(msg));
  });

  it("is for administrators only", async () => {
    const reply = await server.call("POST", "/api/v1/channel_folders/create", {
      ...as("hamlet"),
      form: { name: "Mine" },
    });
    expect(reply.body).toEqual(
      error("Must be an organization administrator", "UNAUTHORIZED_PRINCIPAL"),
    );
  });
});

describe("POST /api/v1/user_groups/{id}/deactivate", () => {
  const createGroup = async (who: string, name: string) => {
    const reply = await server.call("POST", "/api/v1/user_groups/create", {
      ...as(who),
      form: { name, description: "", members: [id(who)] },
    });
    return reply.body.group_id as number;
  };
  const deactivate = (who: string, groupId: number) =>
    server.call("POST", `/api/v1/user_groups/${groupId}/deactivate`, as(who));

  it("deactivates a group its creator manages; listings show it only when asked", async () => {
    const groupId = await createGroup("cordelia", "rehearsals");
    const reply = await deactivate("cordelia", groupId);
    expect(validateDeactivate(reply.body)).toEqual([]);
    expect(reply.body).toEqual({ result: "success", msg: "" });
    const active = await server.call("GET", "/api/v1/user_groups", as("hamlet"));
    expect((active.body.user_groups as { id: number }[]).map((g) => g.id)).not.toContain(groupId);
    const all = await server.call("GET", "/api/v1/user_groups", {
      ...as("hamlet"),
      query: { include_deactivated_groups: true },
    });
    expect(validateGroups(all.body)).toEqual([]);
    expect(all.body.user_groups).toContainEqual(
      expect.objectContaining({ id: groupId, deactivated: true }),
    );
    expect((await deactivate("cordelia", groupId)).body).toEqual(
      error("User group is already deactivated."),
    );
  });

  it("refuses a group in use, with Zulip's objections", async () => {
    const inner = await createGroup("iago", "inner circle");
    const outer = await createGroup("iago", "outer circle");
    await server.call("POST", `/api/v1/user_groups/${outer}/subgroups`, {
      ...as("iago"),
      form: { add: [inner] },
    });
    const channel = await server.call("POST", "/api/v1/channels/create", {
      ...as("iago"),
      form: { name: "Inner sanctum", subscribers: [], can_send_message_group: inner },
    });
    const reply = await deactivate("iago", inner);
    expect([reply.status, reply.body]).toEqual([
      400,
      {
        result: "error",
        msg: "Cannot deactivate user group in use.",
        code: "CANNOT_DEACTIVATE_GROUP_IN_USE",
        objections: [
          { type: "subgroup", supergroup_ids: [outer] },
          { type: "channel", channel_id: channel.body.id, settings: ["can_send_message_group"] },
        ],
      },
    ]);
    expect(
      (await server.db.prisma.userGroup.findUniqueOrThrow({ where: { id: inner } })).deactivated,
    ).toBe(false);
  });

  it("refuses system groups, unmanaged groups, unknown and foreign groups", async () => {
    expect((await deactivate("iago", groups["role:members"] ?? 0)).body).toEqual(
      error("Insufficient permission"),
    );
    expect((await deactivate("hamlet", groups.hamletcharacters ?? 0)).body).toEqual(
      error("Insufficient permission"),
    );
    expect((await deactivate("iago", 999_999)).body).toEqual(error("Invalid user group"));
    const foreign = await server.db.prisma.userGroup.findFirstOrThrow({
      where: { realm: { subdomain: "lear" }, name: "role:members" },
    });
    expect((await deactivate("iago", foreign.id)).body).toEqual(error("Invalid user group"));
  });
});
