import {
  type TestServer,
  apiError,
  authOf,
  createOtherRealm,
  listenAs,
  startTestServer,
} from "./support/server";
import { fullEventsSchema, zulipResponseSchema } from "./support/zulip-schema";

/**
 * What administrators do to other people's accounts and people to their own:
 * PATCH /users/{user_id} and /users/{email} (name, role, custom profile
 * data), DELETE /users/{user_id}, POST /users/{user_id}/reactivate and
 * DELETE /users/me, with Zulip's rules, errors and events, each event
 * checked against Zulip 10.2's whole API document.
 */
let server: TestServer;
const fullEvents = fullEventsSchema();
const simpleSuccess = zulipResponseSchema("full", "/users/{user_id}", "patch");
const ownDeactivationError = zulipResponseSchema("full", "/users/me", "delete", "400");

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

const as = async (who: string) => authOf(await server.person(who));

/** The events since the last call, each checked against the whole 10.2 document. */
async function described(listen: () => Promise<Record<string, unknown>[]>) {
  const events = await listen();
  expect(fullEvents({ events: events.map((event, id) => ({ id, ...event })) })).toEqual([]);
  return events;
}

const patchUser = async (who: string, ref: number | string, form: Record<string, string>) =>
  server.call("PATCH", `/api/v1/users/${encodeURIComponent(String(ref))}`, {
    ...(await as(who)),
    form,
  });

const systemGroupsOf = async (userId: number) =>
  (
    await server.db.prisma.userGroupMember.findMany({
      where: { user_id: userId, group: { is_system_group: true } },
      select: { group: { select: { name: true } } },
    })
  ).map((m) => m.group.name);

const fieldId = async (name: string) =>
  (await server.db.prisma.customProfileField.findFirstOrThrow({ where: { name } })).id;

describe("PATCH /users/{user_id}", () => {
  it("renames a person and changes their role, telling the realm, in effect on the next request", async () => {
    const hamlet = await server.person("hamlet");
    const listen = await listenAs(server, await as("othello"), ["realm_user", "user_group"]);
    const reply = await patchUser("iago", hamlet.id, { full_name: "Prince Hamlet", role: "300" });
    expect(reply.body).toEqual({ result: "success", msg: "" });
    expect(simpleSuccess(reply.body)).toEqual([]);
    const events = await described(listen);
    const groups = await server.db.prisma.userGroup.findMany({
      where: { name: { in: ["role:fullmembers", "role:moderators"] }, realm: { subdomain: "" } },
    });
    const idOf = (name: string) => groups.find((g) => g.name === name)?.id;
    expect(events).toEqual([
      { type: "realm_user", op: "update", person: { user_id: hamlet.id, role: 300 } },
      {
        type: "user_group",
        op: "remove_members",
        group_id: idOf("role:fullmembers"),
        user_ids: [hamlet.id],
      },
      {
        type: "user_group",
        op: "add_members",
        group_id: idOf("role:moderators"),
        user_ids: [hamlet.id],
      },
      {
        type: "realm_user",
        op: "update",
        person: { user_id: hamlet.id, full_name: "Prince Hamlet" },
      },
    ]);
    expect(await systemGroupsOf(hamlet.id)).toEqual(["role:moderators"]);
    const me = await server.call("GET", "/api/v1/users/me", authOf(hamlet));
    expect([me.body.role, me.body.full_name]).toEqual([300, "Prince Hamlet"]);
  });

  it("finds the person by address as well", async () => {
    const othello = await server.person("othello");
    expect((await patchUser("iago", othello.email, { full_name: "The Moor" })).status).toBe(200);
    const row = await server.db.prisma.user.findUniqueOrThrow({ where: { id: othello.id } });
    expect(row.full_name).toBe("The Moor");
  });

  it("leaves owners to owners, and the only owner an owner", async () => {
    const prospero = await server.person("prospero");
    const desdemona = await server.person("desdemona");
    const byAdmin = await patchUser("iago", prospero.id, { role: "100" });
    expect(byAdmin.body).toEqual(
      apiError("Must be an organization owner", "UNAUTHORIZED_PRINCIPAL"),
    );
    const demote = await patchUser("desdemona", desdemona.id, { role: "200" });
    expect(demote.body).toEqual(
      apiError("The owner permission cannot be removed from the only organization owner."),
    );
    expect((await patchUser("iago", prospero.id, { role: "250" })).body).toEqual(
      apiError("Invalid role"),
    );
    const byMember = await patchUser("cordelia", prospero.id, { full_name: "Nobody" });
    expect(byMember.status).toBe(400);
    expect(byMember.body.msg).toBe("Must be an organization administrator");
    const row = await server.db.prisma.user.findUniqueOrThrow({ where: { id: prospero.id } });
    expect([row.role, row.full_name]).toEqual([300, "Prospero from The Tempest"]);
    // An owner may make another owner, who may then be demoted again.
    expect((await patchUser("desdemona", prospero.id, { role: "100" })).status).toBe(200);
    expect((await patchUser("desdemona", prospero.id, { role: "300" })).status).toBe(200);
    expect(await systemGroupsOf(prospero.id)).toEqual(["role:moderators"]);
  });

  it("sets and clears custom profile data, checked per field type", async () => {
    const cordelia = await server.person("cordelia");
    const phone = await fieldId("Phone number");
    const bio = await fieldId("Biography");
    const editor = await fieldId("Favorite editor");
    const listen = await listenAs(server, await as("othello"), ["realm_user"]);
    const set = await patchUser("iago", cordelia.id, {
      profile_data: JSON.stringify([
        { id: phone, value: "+1-555-0100" },
        { id: bio, value: "Youngest daughter of **Lear**" },
        { id: editor, value: "vim" },
      ]),
    });
    expect(set.body).toEqual({ result: "success", msg: "" });
    const events = await described(listen);
    expect(events.map((e) => (e.person as Record<string, unknown>).custom_profile_field)).toEqual([
      { id: phone, value: "+1-555-0100", rendered_value: "<p>+1-555-0100</p>" },
      {
        id: bio,
        value: "Youngest daughter of **Lear**",
        rendered_value: "<p>Youngest daughter of <strong>Lear</strong></p>",
      },
      { id: editor, value: "vim" },
    ]);
    const seen = await server.call("GET", `/api/v1/users/${cordelia.id}`, {
      ...(await as("hamlet")),
      query: { include_custom_profile_fields: "true" },
    });
    expect((seen.body.user as Record<string, unknown>).profile_data).toMatchObject({
      [phone]: { value: "+1-555-0100" },
      [editor]: { value: "vim", rendered_value: null },
    });
    // Bad values change nothing, the good ones beside them included.
    for (const [data, message] of [
      [[{ id: editor, value: "nano" }], "'nano' is not a valid choice for 'Favorite editor'."],
      [[{ id: phone, value: "9".repeat(51) }], "Phone number is too long (limit: 50 characters)"],
      [[{ id: 999_999, value: "x" }], "Field id 999999 not found."],
      [
        [
          { id: phone, value: "+1-555-0199" },
          { id: bio, value: [1, 2] },
        ],
        "Biography is not a string",
      ],
    ] as const) {
      const refused = await patchUser("iago", cordelia.id, { profile_data: JSON.stringify(data) });
      expect(refused.body).toEqual(apiError(message));
    }
    const cleared = await patchUser("iago", cordelia.id, {
      profile_data: JSON.stringify([{ id: editor, value: null }]),
    });
    expect(cleared.status).toBe(200);
    expect(await described(listen)).toEqual([
      {
        type: "realm_user",
        op: "update",
        person: { user_id: cordelia.id, custom_profile_field: { id: editor, value: null } },
      },
    ]);
    const values = await server.db.prisma.customProfileFieldValue.findMany({
      where: { user_id: cordelia.id },
      orderBy: { field_id: "asc" },
    });
    expect(values.map((v) => [v.field_id, v.value])).toEqual([
      [phone, "+1-555-0100"],
      [bio, "Youngest daughter of **Lear**"],
    ]);
  });

  it("does not reach another realm's people", async () => {
    const { outsider } = await createOtherRealm(server);
    expect((await patchUser("iago", outsider.id, { full_name: "Mine" })).body).toEqual(
      apiError("No such user"),
    );
    expect(
      (await server.call("DELETE", `/api/v1/users/${outsider.id}`, await as("iago"))).body,
    ).toEqual(apiError("No such user"));
  });
});

describe("DELETE /users/{user_id} and POST /users/{user_id}/reactivate", () => {
  it("ends the person's key, queues and bots at once, and e-mails them the comment", async () => {
    const lear = await server.person("hamlet");
    const learId = lear.id;
    const learAuth = authOf(lear);
    const bot = await server.call("POST", "/api/v1/bots", {
      ...learAuth,
      form: { full_name: "Fool", short_name: "fool" },
    });
    expect(bot.status).toBe(200);
    const queue = await server.call("POST", "/api/v1/register", {
      ...learAuth,
      form: { event_types: JSON.stringify(["message"]) },
    });
    const waiting = server.call("GET", "/api/v1/events", {
      ...learAuth,
      query: { queue_id: String(queue.body.queue_id), last_event_id: "-1" },
    });
    const bots = await server.db.prisma.user.findMany({
      where: { bot_owner_id: learId, is_active: true },
      orderBy: { id: "asc" },
    });
    expect(bots.map((b) => b.id)).toContain(bot.body.user_id);
    const listen = await listenAs(server, await as("othello"), ["realm_user"]);
    const started = Date.now();
    const reply = await server.call("DELETE", `/api/v1/users/${learId}`, {
      ...(await as("iago")),
      form: { deactivation_notification_comment: "  Thank you, and farewell.  " },
    });
    expect(reply.body).toEqual({ result: "success", msg: "" });
    // The held poll ends at once rather than at its heartbeat, 50 s away.
    const ended = await waiting;
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(ended.body.code).toBe("BAD_EVENT_QUEUE_ID");
    expect((await server.call("GET", "/api/v1/users/me", learAuth)).status).toBe(401);
    expect(await described(listen)).toEqual([
      { type: "realm_user", op: "update", person: { user_id: learId, is_active: false } },
      ...bots.map((b) => ({
        type: "realm_user",
        op: "update",
        person: { user_id: b.id, is_active: false },
      })),
    ]);
    const mail = await server.db.prisma.outboxEmail.findFirstOrThrow({
      where: { to_address: lear.email },
      orderBy: { id: "desc" },
    });
    expect(mail.subject).toBe("Notification of account deactivation on Demo");
    expect(mail.body_text).toContain("\nThank you, and farewell.");
    // Deactivating again: no such (active) user.
    expect((await server.call("DELETE", `/api/v1/users/${learId}`, await as("iago"))).body).toEqual(
      apiError("No such user"),
    );

    const back = await server.call("POST", `/api/v1/users/${learId}/reactivate`, await as("iago"));
    expect(back.body).toEqual({ result: "success", msg: "" });
    expect((await server.call("GET", "/api/v1/users/me", learAuth)).status).toBe(200);
    expect(await described(listen)).toEqual([
      { type: "realm_user", op: "update", person: { user_id: learId, is_active: true } },
    ]);
    const fool = await server.db.prisma.user.findUniqueOrThrow({
      where: { id: bot.body.user_id as number },
    });
    expect(fool.is_active).toBe(false);
  });

  it("refuses members, the only owner, and owners to administrators", async () => {
    const desdemona = await server.person("desdemona");
    const prospero = await server.person("prospero");
    const byMember = await server.call(
      "DELETE",
      `/api/v1/users/${prospero.id}`,
      await as("cordelia"),
    );
    expect(byMember.body.msg).toBe("Must be an organization administrator");
    const onlyOwner = await server.call(
      "DELETE",
      `/api/v1/users/${desdemona.id}`,
      await as("desdemona"),
    );
    expect(onlyOwner.body).toEqual(apiError("Cannot deactivate the only organization owner"));
    const ownerByAdmin = await server.call(
      "DELETE",
      `/api/v1/users/${desdemona.id}`,
      await as("iago"),
    );
    expect(ownerByAdmin.body).toEqual(
      apiError("Must be an organization owner", "UNAUTHORIZED_PRINCIPAL"),
    );
    const active = await server.db.prisma.user.count({
      where: { id: { in: [desdemona.id, prospero.id] }, is_active: true },
    });
    expect(active).toBe(2);
  });
});

describe("DELETE /users/me", () => {
  it("deactivates one's own account", async () => {
    const polonius = await server.person("polonius");
    const reply = await server.call("DELETE", "/api/v1/users/me", authOf(polonius));
    expect(reply.body).toEqual({ result: "success", msg: "" });
    expect((await server.call("GET", "/api/v1/users/me", authOf(polonius))).status).toBe(401);
  });

  it("refuses the only owner, with Zulip's fields", async () => {
    const reply = await server.call("DELETE", "/api/v1/users/me", await as("desdemona"));
    expect(reply.body).toEqual({
      ...apiError("Cannot deactivate the only organization owner.", "CANNOT_DEACTIVATE_LAST_USER"),
      entity: "organization owner",
      is_last_owner: true,
    });
    expect(ownDeactivationError(reply.body)).toEqual([]);
  });
});
