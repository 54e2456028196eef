import {
  type Cast,
  type Person,
  type TestServer,
  apiError,
  createOtherRealm,
  loadCast,
  startTestServer,
  channelIds,
} from "./support/server";
import { zulipResponseSchema } from "./support/zulip-schema";

const validateStreams = zulipResponseSchema("companions", "/streams", "get");
const validateStream = zulipResponseSchema("companions", "/streams/{stream_id}", "get");
const validateSubscriptions = zulipResponseSchema("companions", "/users/me/subscriptions", "get");
const validateSubscribe = zulipResponseSchema("companions", "/users/me/subscriptions", "post");

let server: TestServer;
let cast: Cast;
let channels: Record<string, number>;
let groups: Record<string, number>;
let outsider: Person;

const WHO = ["desdemona", "iago", "prospero", "hamlet", "othello", "cordelia", "polonius"];

beforeAll(async () => {
  server = await startTestServer();
  cast = await loadCast(server, [...WHO, "hamlet-bot"]);
  channels = await channelIds(server);
  const groupRows = await server.db.prisma.userGroup.findMany({ where: { name: { not: null } } });
  groups = Object.fromEntries(groupRows.map((g) => [g.name ?? "", g.id]));
  ({ outsider } = await createOtherRealm(server));
});

afterAll(() => server.close());

const as = (who: string) => cast.as(who);
const id = (who: string) => cast.id(who);

const error = apiError;
const names = (streams: unknown) => (streams as { name: string }[]).map((s) => s.name);

describe("GET /api/v1/streams", () => {
  it("lists public and subscribed channels by name, in Zulip's shape", async () => {
    const reply = await server.call("GET", "/api/v1/streams", as("othello"));
    expect(reply.status).toBe(200);
    expect(validateStreams(reply.body)).toEqual([]);
    expect(names(reply.body.streams)).toEqual(["Denmark", "Scotland", "Verona"]);
    const denmark = (reply.body.streams as Record<string, unknown>[])[0];
    expect(denmark).toMatchObject({
      stream_id: channels.Denmark,
      description: "Something is rotten in the state of Denmark.",
      rendered_description: "<p>Something is rotten in the state of Denmark.</p>",
      invite_only: false,
      is_web_public: false,
      is_archived: false,
      creator_id: id("desdemona"),
      history_public_to_subscribers: true,
      message_retention_days: null,
      stream_post_policy: 1,
      is_announcement_only: false,
      can_send_message_group: groups["role:everyone"],
      can_remove_subscribers_group: groups["role:administrators"],
      topics_policy: "inherit",
      folder_id: null,
      subscriber_count: 7,
      stream_weekly_traffic: null,
    });
    const first = await server.db.prisma.message.findFirstOrThrow({
      where: { channel_id: channels.Denmark },
      orderBy: { id: "asc" },
    });
    expect(denmark?.first_message_id).toBe(first.id);
  });

  it("shows private channels to their subscribers and, with include_all, to administrators", async () => {
    const member = await server.call("GET", "/api/v1/streams", as("hamlet"));
    expect(names(member.body.streams)).toContain("core team");
    const admin = await server.call("GET", "/api/v1/streams", {
      ...as("iago"),
      query: { include_all: true },
    });
    expect(names(admin.body.streams)).toContain("core team");
    const outsiderMember = await server.call("GET", "/api/v1/streams", {
      ...as("cordelia"),
      query: { include_all: true },
    });
    expect(names(outsiderMember.body.streams)).not.toContain("core team");
  });

  it("gives guests only what they are subscribed to, never other public channels", async () => {
    const reply = await server.call("GET", "/api/v1/streams", {
      ...as("polonius"),
      query: { include_public: true, include_all: true },
    });
    expect(names(reply.body.streams)).toEqual(["Denmark", "Scotland", "Verona"]);
    const unsubscribedPublic = await server.db.prisma.channel.create({
      data: {
        ...(await server.db.prisma.channel.findUniqueOrThrow({
          where: { id: channels.Verona },
          omit: { id: true, date_created: true },
        })),
        name: "Mantua",
        is_default_stream: false,
      },
    });
    const again = await server.call("GET", "/api/v1/streams", as("polonius"));
    expect(names(again.body.streams)).not.toContain("Mantua");
    const member = await server.call("GET", "/api/v1/streams", as("cordelia"));
    expect(names(member.body.streams)).toContain("Mantua");
    await server.db.prisma.channel.delete({ where: { id: unsubscribedPublic.id } });
  });

  it("adds is_default with include_default, and filters by kind", async () => {
    const reply = await server.call("GET", "/api/v1/streams", {
      ...as("hamlet"),
      query: { include_default: true, include_public: false, include_subscribed: false },
    });
    expect(validateStreams(reply.body)).toEqual([]);
    const streams = reply.body.streams as { name: string; is_default: boolean }[];
    expect(streams.map((s) => [s.name, s.is_default])).toEqual([
      ["Denmark", true],
      ["Scotland", true],
      ["Verona", true],
    ]);
    const none = await server.call("GET", "/api/v1/streams", {
      ...as("hamlet"),
      query: { include_public: false, include_subscribed: false },
    });
    expect(none.body.streams).toEqual([]);
  });

  it("hides archived channels unless exclude_archived=false", async () => {
    const created = await server.call("POST", "/api/v1/channels/create", {
      ...as("iago"),
      form: { name: "Ruins", subscribers: [id("iago")] },
    });
    const channelId = created.body.id as number;
    expect((await server.call("DELETE", `/api/v1/streams/${channelId}`, as("iago"))).status).toBe(
      200,
    );
    const active = await server.call("GET", "/api/v1/streams", as("iago"));
    expect(names(active.body.streams)).not.toContain("Ruins");
    const all = await server.call("GET", "/api/v1/streams", {
      ...as("iago"),
      query: { exclude_archived: false },
    });
    expect(all.body.streams).toContainEqual(
      expect.objectContaining({ name: "Ruins", is_archived: true }),
    );
  });

  it("refuses a bad boolean with the contract's message", async () => {
    const reply = await server.call("GET", "/api/v1/streams", {
      ...as("hamlet"),
      query: { include_public: "maybe" },
    });
    expect([reply.status, reply.body]).toEqual([400, error("include_public is not a boolean")]);
  });
});

describe("GET /api/v1/streams/{stream_id}", () => {
  it("returns one channel in Zulip's shape", async () => {
    const reply = await server.call(
      "GET",
      `/api/v1/streams/${channels["core team"]}`,
      as("hamlet"),
    );
    expect(validateStream(reply.body)).toEqual([]);
    expect(reply.body.stream).toMatchObject({
      stream_id: channels["core team"],
      name: "core team",
      invite_only: true,
      history_public_to_subscribers: false,
      subscriber_count: 3,
      first_message_id: null,
    });
  });

  it("answers Invalid channel ID for a private channel the caller cannot see, or another realm's", async () => {
    for (const [who, channel] of [
      ["cordelia", channels["core team"]],
      ["polonius", channels["core team"]],
    ] as const) {
      const reply = await server.call("GET", `/api/v1/streams/${channel}`, as(who));
      expect([reply.status, reply.body]).toEqual([400, error("Invalid channel ID")]);
    }
    const foreign = await server.call("GET", `/api/v1/streams/${channels.Denmark}`, {
      auth: [outsider.email, outsider.apiKey],
      host: "lear.chat.test",
    });
    expect(foreign.body).toEqual(error("Invalid channel ID"));
  });
});

describe("GET /api/v1/streams/{stream_id}/email_address", () => {
  const address = (who: string, channel: number | undefined, query: Record<string, string> = {}) =>
    server.call("GET", `/api/v1/streams/${String(channel)}/email_address`, { ...as(who), query });

  it("answers an empty address (no email gateway), as the caller or a bot of theirs", async () => {
    const plain = await address("hamlet", channels.Denmark);
    expect(plain.body).toEqual({ result: "success", msg: "", email: "" });
    const asBot = await address("hamlet", channels.Denmark, {
      sender_id: String(id("hamlet-bot")),
    });
    expect(asBot.body).toEqual({ result: "success", msg: "", email: "" });
  });

  it("refuses a channel the caller cannot see and a sender that is not theirs", async () => {
    expect((await address("cordelia", channels["core team"])).body).toEqual(
      error("Invalid channel ID"),
    );
    expect(
      (await address("othello", channels.Denmark, { sender_id: String(id("hamlet-bot")) })).body,
    ).toEqual(error("Invalid user ID"));
  });
});

describe("GET /api/v1/users/me/subscriptions", () => {
  it("lists the caller's subscriptions, with subscribers when asked", async () => {
    const reply = await server.call("GET", "/api/v1/users/me/subscriptions", {
      ...as("hamlet"),
      query: { include_subscribers: true },
    });
    expect(validateSubscriptions(reply.body)).toEqual([]);
    const subscriptions = reply.body.subscriptions as Record<string, unknown>[];
    expect(subscriptions.map((s) => s.name)).toEqual([
      "Denmark",
      "Scotland",
      "Verona",
      "core team",
    ]);
    expect(subscriptions[3]).toMatchObject({
      name: "core team",
      subscribers: [id("desdemona"), id("iago"), id("hamlet")].sort((a, b) => a - b),
      is_muted: false,
      in_home_view: true,
      pin_to_top: false,
      color: "#c2c2c2",
    });
    const plain = await server.call("GET", "/api/v1/users/me/subscriptions", as("hamlet"));
    expect(validateSubscriptions(plain.body)).toEqual([]);
    expect((plain.body.subscriptions as Record<string, unknown>[])[0]).not.toHaveProperty(
      "subscribers",
    );
  });
});

describe("POST /api/v1/users/me/subscriptions", () => {
  const subscribe = (who: string, form: Record<string, unknown>) =>
    server.call("POST", "/api/v1/users/me/subscriptions", { ...as(who), form });

  it("subscribes the caller to a public channel, then reports it as already subscribed", async () => {
    const created = await subscribe("iago", { subscriptions: [{ name: "Padua" }] });
    expect(created.status).toBe(200);
    expect(validateSubscribe(created.body)).toEqual([]);
    expect(created.body).toEqual({
      result: "success",
      msg: "",
      subscribed: { [String(id("iago"))]: ["Padua"] },
      already_subscribed: {},
    });
    const first = await subscribe("othello", { subscriptions: [{ name: "padua" }] });
    expect(first.body.subscribed).toEqual({ [String(id("othello"))]: ["Padua"] });
    const again = await subscribe("othello", { subscriptions: [{ name: "Padua" }] });
    expect(again.body).toMatchObject({
      subscribed: {},
      already_subscribed: { [String(id("othello"))]: ["Padua"] },
    });
    const list = await server.call("GET", "/api/v1/users/me/subscriptions", as("othello"));
    expect((list.body.subscriptions as { name: string }[]).map((s) => s.name)).toContain("Padua");
  });

  it("creates a channel that does not exist, with the creation options", async () => {
    const reply = await subscribe("hamlet", {
      subscriptions: [{ name: "Wittenberg", description: "The university" }],
      invite_only: true,
      principals: [cast.person("hamlet").email, cast.person("cordelia").email.toUpperCase()],
    });
    expect(reply.body.subscribed).toEqual({
      [String(id("hamlet"))]: ["Wittenberg"],
      [String(id("cordelia"))]: ["Wittenberg"],
    });
    const channel = await server.db.prisma.channel.findFirstOrThrow({
      where: { name: "Wittenberg" },
    });
    const view = await server.call("GET", `/api/v1/streams/${channel.id}`, as("cordelia"));
    expect(view.body.stream).toMatchObject({
      description: "The university",
      invite_only: true,
      subscriber_count: 2,
      creator_id: id("hamlet"),
    });
  });

  it("refuses a private channel the caller cannot subscribe to, or lists it when not fatal", async () => {
    const fatal = await subscribe("othello", { subscriptions: [{ name: "core team" }] });
    expect([fatal.status, fatal.body]).toEqual([
      400,
      error("Unable to access channel (core team)."),
    ]);
    const lenient = await subscribe("othello", {
      subscriptions: [{ name: "core team" }, { name: "Verona" }],
      authorization_errors_fatal: false,
    });
    expect(validateSubscribe(lenient.body)).toEqual([]);
    expect(lenient.body).toMatchObject({
      subscribed: {},
      already_subscribed: { [String(id("othello"))]: ["Verona"] },
      unauthorized: ["core team"],
    });
    expect(
      await server.db.prisma.subscription.count({
        where: { user_id: id("othello"), channel_id: channels["core team"] },
      }),
    ).toBe(0);
  });

  it("lets an administrator subscribe others anywhere; a guest cannot subscribe others", async () => {
    const admin = await subscribe("iago", {
      subscriptions: [{ name: "core team" }],
      principals: [id("othello")],
    });
    expect(admin.body.subscribed).toEqual({ [String(id("othello"))]: ["core team"] });
    const guest = await subscribe("polonius", {
      subscriptions: [{ name: "Verona" }],
      principals: [id("cordelia")],
    });
    expect(guest.body).toEqual(error("Unable to access channel (Verona)."));
  });

  it("refuses unknown principals and bad names, changing nothing", async () => {
    const before = await server.db.prisma.subscription.count();
    const unknown = await subscribe("iago", {
      subscriptions: [{ name: "Verona" }],
      principals: [999_999],
    });
    expect(unknown.body).toEqual(error("No such user"));
    const foreign = await subscribe("iago", {
      subscriptions: [{ name: "Verona" }],
      principals: [outsider.id],
    });
    expect(foreign.body).toEqual(error("No such user"));
    const blank = await subscribe("iago", { subscriptions: [{ name: " " }] });
    expect(blank.body).toEqual(error("Channel name can't be empty."));
    const extra = await subscribe("iago", { subscriptions: [{ name: "A", color: "red" }] });
    expect(extra.body).toEqual(error('Argument "color" at subscriptions[0] is unexpected'));
    expect(await server.db.prisma.subscription.count()).toBe(before);
  });
});
