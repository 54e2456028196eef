import { type Person, type TestServer, createOtherRealm, startTestServer } from "./support/server";
import { zulipResponseSchema } from "./support/zulip-schema";

const validate = zulipResponseSchema("subset", "/channels/create", "post");
const validateStream = zulipResponseSchema("companions", "/streams/{stream_id}", "get");

let server: TestServer;
let people: Record<string, Person>;
let groups: Record<string, number>;

beforeAll(async () => {
  server = await startTestServer({ env: { CHAT_WEB_PUBLIC_STREAMS_ENABLED: "true" } });
  people = {};
  for (const who of [
    "desdemona",
    "iago",
    "prospero",
    "hamlet",
    "othello",
    "cordelia",
    "polonius",
    "hamlet-bot",
  ]) {
    people[who] = await server.person(who);
  }
  const rows = await server.db.prisma.userGroup.findMany({ where: { name: { not: null } } });
  groups = Object.fromEntries(rows.map((g) => [g.name ?? "", g.id]));
});

afterAll(() => server.close());

const create = (who: string, form: Record<string, unknown>) => {
  const p = people[who];
  if (p === undefined) throw new Error(who);
  return server.call("POST", "/api/v1/channels/create", { auth: [p.email, p.apiKey], form });
};
const id = (who: string) => people[who]?.id ?? 0;
const error = (msg: string, code = "BAD_REQUEST") => ({ result: "error", msg, code });

describe("POST /api/v1/channels/create", () => {
  it("creates a public channel with subscribers and Zulip's defaults", async () => {
    const reply = await create("hamlet", {
      name: "Elsinore",
      description: "The castle",
      subscribers: [id("hamlet"), id("othello")],
    });
    expect(reply.status).toBe(200);
    expect(validate(reply.body)).toEqual([]);
    const channel = await server.db.prisma.channel.findUniqueOrThrow({
      where: { id: reply.body.id as number },
      include: {
        subscriptions: true,
        can_administer_channel_group: { include: { members: true } },
      },
    });
    expect(channel).toMatchObject({
      name: "Elsinore",
      description: "The castle",
      rendered_description: "<p>The castle</p>",
      invite_only: false,
      is_web_public: false,
      history_public_to_subscribers: true,
      is_default_stream: false,
      message_retention_days: null,
      topics_policy: "inherit",
      creator_id: id("hamlet"),
      can_send_message_group_id: groups["role:everyone"],
    });
    expect(channel.subscriptions.map((s) => s.user_id).sort((a, b) => a - b)).toEqual(
      [id("hamlet"), id("othello")].sort((a, b) => a - b),
    );
    expect(channel.can_administer_channel_group.members.map((m) => m.user_id)).toEqual([
      id("hamlet"),
    ]);
  });

  it("announces a public channel from the notification bot in the announcements channel", async () => {
    const reply = await create("iago", { name: "Cyprus", subscribers: [], announce: true });
    expect(reply.status).toBe(200);
    const verona = await server.db.prisma.channel.findFirstOrThrow({ where: { name: "Verona" } });
    const message = await server.db.prisma.message.findFirstOrThrow({
      where: { channel_id: verona.id, topic: "new channels" },
      include: { sender: true },
    });
    expect(message.sender.email).toBe("notification-bot@example.com");
    expect(message.content).toBe(`@_**Iago|${id("iago")}** created a new channel #**Cyprus**.`);
    expect(await server.db.prisma.userMessage.count({ where: { message_id: message.id } })).toBe(7);
  });

  it("creates a private channel with protected history and settings as ids or sets", async () => {
    const reply = await create("hamlet", {
      name: "Ghosts",
      subscribers: [id("hamlet")],
      invite_only: true,
      topics_policy: "disable_empty_topic",
      can_send_message_group: groups.hamletcharacters,
      can_subscribe_group: {
        direct_members: [id("cordelia")],
        direct_subgroups: [groups["role:moderators"]],
      },
    });
    expect(reply.status).toBe(200);
    const channel = await server.db.prisma.channel.findUniqueOrThrow({
      where: { id: reply.body.id as number },
      include: { can_subscribe_group: { include: { members: true, subgroups: true } } },
    });
    expect(channel).toMatchObject({
      invite_only: true,
      history_public_to_subscribers: false,
      topics_policy: "disable_empty_topic",
    });
    expect(channel.can_send_message_group_id).toBe(groups.hamletcharacters);
    expect(channel.can_subscribe_group.name).toBeNull();
    expect(channel.can_subscribe_group.members.map((m) => m.user_id)).toEqual([id("cordelia")]);
    expect(channel.can_subscribe_group.subgroups.map((s) => s.subgroup_id)).toEqual([
      groups["role:moderators"],
    ]);
  });

  it("lets an owner set a retention period and an administrator a default channel", async () => {
    const owner = await create("desdemona", {
      name: "Archive",
      subscribers: [],
      message_retention_days: "unlimited",
      is_default_stream: true,
    });
    expect(owner.status).toBe(200);
    const channel = await server.db.prisma.channel.findUniqueOrThrow({
      where: { id: owner.body.id as number },
    });
    expect([channel.message_retention_days, channel.is_default_stream]).toEqual([-1, true]);
    const days = await create("desdemona", {
      name: "Short memory",
      subscribers: [],
      message_retention_days: "30",
    });
    expect(
      (await server.db.prisma.channel.findUniqueOrThrow({ where: { id: days.body.id as number } }))
        .message_retention_days,
    ).toBe(30);
  });

  it("creates a web-public channel when the server, the realm and the creator allow it", async () => {
    const refused = await create("desdemona", {
      name: "Open stage",
      subscribers: [],
      is_web_public: true,
    });
    expect(refused.body).toEqual(error("Insufficient permission"));
    const realm = await server.db.prisma.realm.findFirstOrThrow();
    await server.db.prisma.realm.update({
      where: { id: realm.id },
      data: { enable_spectator_access: true },
    });
    server.services.bus.apply({ realm: realm.id });
    const ok = await create("desdemona", {
      name: "Open stage",
      subscribers: [],
      is_web_public: true,
    });
    expect(ok.status).toBe(200);
    expect(
      (await server.call("GET", "/api/v1/server_settings")).body.realm_web_public_access_enabled,
    ).toBe(true);
    expect(
      (await create("iago", { name: "Open stage 2", subscribers: [], is_web_public: true })).body,
    ).toEqual(error("Insufficient permission"));
  });

  it.each<[string, string, Record<string, unknown>, Record<string, unknown>]>([
    [
      "a duplicate name, in any case",
      "hamlet",
      { name: "eLSINORE", subscribers: [] },
      error("Channel 'eLSINORE' already exists", "CHANNEL_ALREADY_EXISTS"),
    ],
    [
      "an empty name",
      "hamlet",
      { name: "   ", subscribers: [] },
      error("Channel name can't be empty."),
    ],
    [
      "a long name",
      "hamlet",
      { name: "n".repeat(61), subscribers: [] },
      error("Channel name too long (limit: 60 characters)."),
    ],
    [
      "a NUL in the name",
      "hamlet",
      { name: "ab\u0000c", subscribers: [] },
      error("Invalid character in channel name, at position 3."),
    ],
    [
      "a control character",
      "hamlet",
      { name: "a\u0007", subscribers: [] },
      error("Invalid character in channel name, at position 2."),
    ],
    [
      "a long description",
      "hamlet",
      { name: "X", description: "d".repeat(1025), subscribers: [] },
      error("description is too long (limit: 1024 characters)"),
    ],
    [
      "an unknown subscriber",
      "hamlet",
      { name: "X", subscribers: [999_999] },
      error("No such user"),
    ],
    [
      "a private default channel",
      "iago",
      { name: "X", subscribers: [], invite_only: true, is_default_stream: true },
      error("A default channel cannot be private."),
    ],
    [
      "a default channel by a member",
      "hamlet",
      { name: "X", subscribers: [], is_default_stream: true },
      error("Must be an organization administrator", "UNAUTHORIZED_PRINCIPAL"),
    ],
    [
      "a retention period by an administrator",
      "iago",
      { name: "X", subscribers: [], message_retention_days: "10" },
      error("Must be an organization owner", "UNAUTHORIZED_PRINCIPAL"),
    ],
    [
      "a bad retention period",
      "desdemona",
      { name: "X", subscribers: [], message_retention_days: "forever" },
      error("Bad value for 'message_retention_days': forever"),
    ],
    [
      "a bad topics policy",
      "hamlet",
      { name: "X", subscribers: [], topics_policy: "whatever" },
      error("Invalid topics_policy"),
    ],
    [
      "an unknown folder",
      "hamlet",
      { name: "X", subscribers: [], folder_id: 999_999 },
      error("Invalid channel folder ID"),
    ],
    [
      "an unknown group in a setting",
      "hamlet",
      { name: "X", subscribers: [], can_send_message_group: 999_999 },
      error("Invalid user group"),
    ],
    [
      "a restricted topic group on a private channel with protected history",
      "hamlet",
      { name: "X", subscribers: [], invite_only: true, can_create_topic_group: 0 },
      error(
        "can_create_topic_group must be role:everyone for a private channel with protected history.",
      ),
    ],
    ["a guest", "polonius", { name: "X", subscribers: [] }, error("Insufficient permission")],
    [
      "a missing subscribers list",
      "hamlet",
      { name: "X" },
      {
        result: "error",
        msg: "Missing 'subscribers' argument",
        code: "REQUEST_VARIABLE_MISSING",
        var_name: "subscribers",
      },
    ],
  ])("refuses %s, creating nothing", async (_what, who, form, expected) => {
    const fixed = { ...form };
    if (fixed.can_create_topic_group === 0) fixed.can_create_topic_group = groups["role:members"];
    const before = await server.db.prisma.channel.count();
    const reply = await create(who, fixed);
    expect([reply.status, reply.body]).toEqual([400, expected]);
    expect(await server.db.prisma.channel.count()).toBe(before);
  });

  it("follows the realm's can_create_*_channel_group settings", async () => {
    const realm = await server.db.prisma.realm.findFirstOrThrow();
    await server.db.prisma.realm.update({
      where: { id: realm.id },
      data: { can_create_private_channel_group_id: groups["role:administrators"] },
    });
    try {
      expect(
        (await create("othello", { name: "Secret", subscribers: [], invite_only: true })).body,
      ).toEqual(error("Insufficient permission"));
      expect((await create("othello", { name: "Not secret", subscribers: [] })).status).toBe(200);
      expect(
        (await create("iago", { name: "Secret", subscribers: [], invite_only: true })).status,
      ).toBe(200);
    } finally {
      await server.db.prisma.realm.update({
        where: { id: realm.id },
        data: { can_create_private_channel_group_id: groups["role:members"] },
      });
    }
  });

  it("lets a bot with a member's role create a channel", async () => {
    expect((await create("hamlet-bot", { name: "Bot room", subscribers: [] })).status).toBe(200);
  });

  it.each([
    ["desdemona", 200, undefined],
    ["iago", 200, undefined],
    ["prospero", 200, undefined],
    ["cordelia", 200, undefined],
    ["polonius", 400, "Insufficient permission"],
    ["hamlet-bot", 200, undefined],
  ])("caller matrix: %s gets %d", async (who, status, msg) => {
    const reply = await create(who, { name: `Matrix ${who}`, subscribers: [] });
    expect([reply.status, reply.body.msg]).toEqual([status, msg ?? ""]);
  });

  it("answers 401 to a user of another realm, creating nothing", async () => {
    const { outsider } = await createOtherRealm(server);
    const before = await server.db.prisma.channel.count();
    const reply = await server.call("POST", "/api/v1/channels/create", {
      auth: [outsider.email, outsider.apiKey],
      form: { name: "Invasion", subscribers: [] },
    });
    expect([reply.status, reply.body.msg]).toEqual([
      401,
      "Account is not associated with this subdomain",
    ]);
    expect(await server.db.prisma.channel.count()).toBe(before);
  });

  it("reads back through GET /streams/{id} as created", async () => {
    const reply = await create("hamlet", {
      name: "Readback",
      description: "Seen *again*",
      subscribers: [id("hamlet"), id("cordelia")],
      invite_only: true,
      history_public_to_subscribers: true,
      topics_policy: "allow_empty_topic",
      can_send_message_group: groups["role:administrators"],
      can_resolve_topics_group: { direct_members: [id("cordelia")], direct_subgroups: [] },
    });
    expect(reply.status).toBe(200);
    const view = await server.call("GET", `/api/v1/streams/${String(reply.body.id)}`, {
      auth: [people.cordelia?.email ?? "", people.cordelia?.apiKey ?? ""],
    });
    expect(validateStream(view.body)).toEqual([]);
    expect(view.body.stream).toMatchObject({
      name: "Readback",
      description: "Seen *again*",
      invite_only: true,
      history_public_to_subscribers: true,
      topics_policy: "allow_empty_topic",
      stream_post_policy: 2,
      is_announcement_only: true,
      can_send_message_group: groups["role:administrators"],
      can_resolve_topics_group: { direct_members: [id("cordelia")], direct_subgroups: [] },
      can_administer_channel_group: { direct_members: [id("hamlet")], direct_subgroups: [] },
      subscriber_count: 2,
      creator_id: id("hamlet"),
    });
  });

  it("needs permission to administer the new channel to set its permissions", async () => {
    const before = await server.db.prisma.channel.count();
    // Handing administration to others leaves a member without the access to set settings.
    const handedOff = await create("cordelia", {
      name: "Handed off",
      subscribers: [id("cordelia")],
      can_administer_channel_group: groups["role:administrators"],
      can_send_message_group: groups["role:everyone"],
    });
    expect(handedOff.body).toEqual(error("Insufficient permission"));
    // Message settings need content access: a private channel the creator is not in.
    const noContent = await create("cordelia", {
      name: "Not mine",
      subscribers: [id("othello")],
      invite_only: true,
      can_delete_any_message_group: groups["role:moderators"],
    });
    expect(noContent.body).toEqual(error("Insufficient permission"));
    expect(await server.db.prisma.channel.count()).toBe(before);
    // Administrators hold these permissions implicitly.
    const admin = await create("iago", {
      name: "Handed off",
      subscribers: [],
      invite_only: true,
      can_administer_channel_group: groups["role:owners"],
      can_delete_any_message_group: groups["role:moderators"],
    });
    expect(admin.status).toBe(200);
    // A member who stays an administrator of the channel may set the rest.
    const kept = await create("cordelia", {
      name: "Kept",
      subscribers: [id("cordelia")],
      invite_only: true,
      can_delete_any_message_group: groups["role:moderators"],
    });
    expect(kept.status).toBe(200);
  });
});
