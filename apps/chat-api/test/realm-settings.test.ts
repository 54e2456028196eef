import { type TestServer, apiError, authOf, listenAs, startTestServer } from "./support/server";
import { fullEventsSchema } from "./support/zulip-schema";

/**
 * PATCH /realm's `name`: administrators rename the organization; the realm
 * hears a `realm` `update` (checked against Zulip 10.2's whole document) and
 * register's `realm_name` follows at once.
 */
let server: TestServer;
const fullEvents = fullEventsSchema();

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

const patch = async (who: string, form: Record<string, string>) =>
  server.call("PATCH", "/api/v1/realm", { ...authOf(await server.person(who)), form });

const realmName = async () =>
  (
    await server.call("POST", "/api/v1/register", {
      ...authOf(await server.person("hamlet")),
      form: { fetch_event_types: JSON.stringify(["realm"]) },
    })
  ).body.realm_name as string;

it("renames the organization, telling its people", async () => {
  const listen = await listenAs(server, authOf(await server.person("othello")), ["realm"]);
  expect((await patch("iago", { name: "  Elsinore  " })).status).toBe(200);
  const events = await listen();
  expect(fullEvents({ events: events.map((e, id) => ({ id, ...e })) })).toEqual([]);
  expect(events).toEqual([{ type: "realm", op: "update", property: "name", value: "Elsinore" }]);
  expect(await realmName()).toBe("Elsinore");
  // The same name again: nobody is told.
  expect((await patch("iago", { name: "Elsinore" })).status).toBe(200);
  expect(await listen()).toEqual([]);
});

it("refuses a blank or long name, one with a line break, and members, changing nothing", async () => {
  expect((await patch("iago", { name: " " })).body).toEqual(
    apiError("Organization name can't be empty."),
  );
  // The name goes into e-mails' subjects: a line break there would be a header injection.
  for (const name of ["Evil\r\nBcc: everyone@example.net", "Tab\there", "Bell\u0007"])
    expect((await patch("iago", { name })).body).toEqual(
      apiError("Invalid characters in organization name."),
    );
  expect((await patch("iago", { name: "x".repeat(41) })).body).toEqual(
    apiError("Organization name is too long."),
  );
  expect((await patch("hamlet", { name: "Mine" })).body).toEqual(
    apiError("Must be an organization administrator", "UNAUTHORIZED_PRINCIPAL"),
  );
  expect(await realmName()).toBe("Elsinore");
});

/**
 * The rest of PATCH /realm: message editing and its time limits, retention,
 * the language, the description and the permission settings. Each reaches
 * register's state, the realm's clients (events as Zulip 10.2 documents
 * them) and the checks that read it; a request with one bad value changes
 * nothing.
 */
describe("the organization's other settings", () => {
  const register = async (who = "hamlet") =>
    (
      await server.call("POST", "/api/v1/register", {
        ...authOf(await server.person(who)),
        form: { fetch_event_types: JSON.stringify(["realm"]) },
      })
    ).body;
  const send = async (who: string, topic: string) => {
    const reply = await server.call("POST", "/api/v1/messages", {
      ...authOf(await server.person(who)),
      form: { type: "stream", to: "Denmark", topic, content: "Something is rotten" },
    });
    expect(reply.status).toBe(200);
    return reply.body.id as number;
  };
  const age = (id: number, seconds: number) =>
    server.db.prisma.message.update({
      where: { id },
      data: { date_sent: new Date(Date.now() - seconds * 1000) },
    });
  const edit = async (who: string, id: number, form: Record<string, string>) =>
    (
      await server.call("PATCH", `/api/v1/messages/${id}`, {
        ...authOf(await server.person(who)),
        form,
      })
    ).body;
  const systemGroup = async (name: string) =>
    (await server.db.prisma.userGroup.findFirstOrThrow({ where: { name, is_system_group: true } }))
      .id;

  it("changes the editing limits, telling the realm as Zulip does, and the edit checks follow", async () => {
    const listen = await listenAs(server, authOf(await server.person("othello")), ["realm"]);
    const id = await send("hamlet", "limits");
    await age(id, 120);
    // The default 600 s: a two-minute-old message can be edited.
    expect((await edit("hamlet", id, { content: "edited once" })).result).toBe("success");
    const changed = await patch("iago", {
      message_content_edit_limit_seconds: "60",
      message_content_delete_limit_seconds: "60",
      move_messages_within_stream_limit_seconds: "60",
      default_language: "de",
      description: "The **castle** of Elsinore",
    });
    expect(changed.body).toEqual({
      result: "success",
      msg: "",
      message_content_edit_limit_seconds: 60,
      message_content_delete_limit_seconds: 60,
      move_messages_within_stream_limit_seconds: 60,
      default_language: "updated",
      description: "updated",
    });
    expect(await register()).toMatchObject({
      realm_message_content_edit_limit_seconds: 60,
      realm_message_content_delete_limit_seconds: 60,
      realm_move_messages_within_stream_limit_seconds: 60,
      realm_move_messages_between_streams_limit_seconds: 604800,
      realm_default_language: "de",
      realm_description: "<p>The <strong>castle</strong> of Elsinore</p>",
    });
    // A new account speaks the realm's language.
    const created = await server.call("POST", "/api/v1/users", {
      ...authOf(await server.person("desdemona")),
      form: {
        email: "horatio@example.com",
        password: "a friend to this ground",
        full_name: "Horatio",
      },
    });
    expect(created.status).toBe(200);
    const horatio = await server.db.prisma.user.findUniqueOrThrow({
      where: { id: created.body.user_id as number },
    });
    expect(horatio.settings).toMatchObject({ default_language: "de" });
    expect(await edit("hamlet", id, { content: "edited twice" })).toEqual(
      apiError("The time limit for editing this message has past"),
    );
    expect(await edit("hamlet", id, { topic: "moved" })).toEqual(
      apiError("The time limit for editing this message's topic has passed."),
    );
    const deleted = await server.call(
      "DELETE",
      `/api/v1/messages/${id}`,
      authOf(await server.person("hamlet")),
    );
    expect(deleted.body).toEqual(apiError("The time limit for deleting this message has passed"));
    // Administrators edit their own content at any time, moderators move at any time.
    expect((await edit("iago", id, { topic: "moved by iago" })).result).toBe("success");
    expect((await patch("iago", { allow_message_editing: "false" })).body).toMatchObject({
      allow_message_editing: false,
    });
    const fresh = await send("hamlet", "fresh");
    expect(await edit("hamlet", fresh, { content: "new" })).toEqual(
      apiError("Your organization has turned off message editing"),
    );
    expect(
      (
        await patch("iago", {
          allow_message_editing: "true",
          message_content_edit_limit_seconds: '"unlimited"',
          message_content_delete_limit_seconds: "unlimited",
        })
      ).body,
    ).toMatchObject({
      allow_message_editing: true,
      message_content_edit_limit_seconds: null,
      message_content_delete_limit_seconds: null,
    });
    expect((await edit("hamlet", id, { content: "edited at last" })).result).toBe("success");
    expect((await register()).realm_message_content_edit_limit_seconds).toBeNull();
    const events = await listen();
    expect(fullEvents({ events: events.map((e, n) => ({ id: n, ...e })) })).toEqual([]);
    expect(events.filter((e) => e.type === "realm")).toEqual([
      {
        type: "realm",
        op: "update",
        property: "description",
        value: "<p>The <strong>castle</strong> of Elsinore</p>",
      },
      { type: "realm", op: "update", property: "default_language", value: "de" },
      {
        type: "realm",
        op: "update_dict",
        property: "default",
        data: { message_content_edit_limit_seconds: 60 },
      },
      { type: "realm", op: "update", property: "message_content_delete_limit_seconds", value: 60 },
      {
        type: "realm",
        op: "update",
        property: "move_messages_within_stream_limit_seconds",
        value: 60,
      },
      {
        type: "realm",
        op: "update_dict",
        property: "default",
        data: { allow_message_editing: false },
      },
      {
        type: "realm",
        op: "update_dict",
        property: "default",
        data: { allow_message_editing: true },
      },
      {
        type: "realm",
        op: "update_dict",
        property: "default",
        data: { message_content_edit_limit_seconds: null },
      },
      {
        type: "realm",
        op: "update",
        property: "message_content_delete_limit_seconds",
        value: null,
      },
    ]);
  });

  it("lets only owners change retention and the owners' permissions, and the checks follow", async () => {
    expect((await patch("iago", { message_retention_days: "30" })).body).toEqual(
      apiError("Must be an organization owner", "UNAUTHORIZED_PRINCIPAL"),
    );
    expect((await patch("desdemona", { message_retention_days: "30" })).body).toMatchObject({
      message_retention_days: 30,
    });
    expect((await register()).realm_message_retention_days).toBe(30);
    await patch("desdemona", { message_retention_days: "unlimited" });
    expect((await register()).realm_message_retention_days).toBe(-1);

    const moderators = await systemGroup("role:moderators");
    const members = await systemGroup("role:members");
    const change = (value: number) => JSON.stringify({ new: value });
    expect((await patch("iago", { can_create_groups: change(moderators) })).body).toEqual(
      apiError("Must be an organization owner", "UNAUTHORIZED_PRINCIPAL"),
    );
    const listen = await listenAs(server, authOf(await server.person("hamlet")), ["realm"]);
    expect(
      (
        await patch("desdemona", {
          can_create_groups: change(moderators),
          can_create_public_channel_group: JSON.stringify({ new: moderators, old: members }),
        })
      ).body,
    ).toEqual({
      result: "success",
      msg: "",
      can_create_groups: moderators,
      can_create_public_channel_group: moderators,
    });
    const events = await listen();
    expect(fullEvents({ events: events.map((e, n) => ({ id: n, ...e })) })).toEqual([]);
    expect(events).toEqual([
      {
        type: "realm",
        op: "update_dict",
        property: "default",
        data: { can_create_groups: moderators, can_create_public_channel_group: moderators },
      },
    ]);
    expect(await register()).toMatchObject({
      realm_can_create_groups: moderators,
      realm_can_create_public_channel_group: moderators,
    });
    const group = await server.call("POST", "/api/v1/user_groups/create", {
      ...authOf(await server.person("hamlet")),
      form: { name: "Wittenberg", description: "", members: "[]" },
    });
    expect(group.status).toBe(400);
    const channel = await server.call("POST", "/api/v1/users/me/subscriptions", {
      ...authOf(await server.person("hamlet")),
      form: { subscriptions: JSON.stringify([{ name: "Wittenberg" }]) },
    });
    expect(channel.status).toBe(400);
    expect(await server.db.prisma.channel.count({ where: { name: "Wittenberg" } })).toBe(0);
  });

  it("refuses bad values as a whole, storing nothing", async () => {
    const before = await server.db.prisma.realm.findFirstOrThrow({ where: { subdomain: "" } });
    const everyone = await systemGroup("role:everyone");
    const members = await systemGroup("role:members");
    const cases: [Record<string, string>, ReturnType<typeof apiError>][] = [
      [
        { name: "Denmark", message_content_edit_limit_seconds: "0" },
        apiError("Bad value for 'message_content_edit_limit_seconds': 0"),
      ],
      [
        { move_messages_between_streams_limit_seconds: "soon" },
        apiError("Bad value for 'move_messages_between_streams_limit_seconds': soon"),
      ],
      [{ default_language: "<script>" }, apiError("Invalid language '<script>'")],
      [
        { description: "x".repeat(1001) },
        apiError("description is too long (limit: 1000 characters)"),
      ],
      [
        { name: "Denmark", can_add_subscribers_group: JSON.stringify({ new: everyone }) },
        apiError("'can_add_subscribers_group' setting cannot be set to 'role:everyone' group."),
      ],
      [
        {
          can_create_bots_group: JSON.stringify({ new: members, old: everyone }),
        },
        apiError("'old' value does not match the expected value."),
      ],
      [{ new_stream_announcements_stream_id: "999999" }, apiError("Invalid channel ID")],
      [{ allow_message_editing: "perhaps" }, apiError("allow_message_editing is not a boolean")],
    ];
    for (const [form, expected] of cases)
      expect((await patch("desdemona", form)).body).toEqual(expected);
    expect(await server.db.prisma.realm.findFirstOrThrow({ where: { subdomain: "" } })).toEqual(
      before,
    );
    // Nothing to change: success, and an empty answer.
    expect((await patch("desdemona", { name: before.name })).body).toEqual({
      result: "success",
      msg: "",
    });
  });
});
