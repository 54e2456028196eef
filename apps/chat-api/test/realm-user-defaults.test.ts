import { createAccount } from "../src/actions/accounts";
import { type TestServer, apiError, authOf, listenAs, startTestServer } from "./support/server";
import {
  fullEventsSchema,
  fullRegisterProperty,
  zulipResponseSchema,
} from "./support/zulip-schema";

/**
 * PATCH /realm/user_settings_defaults (feature level 96): administrators set
 * the organization's defaults of personal settings; new accounts start with
 * them, existing ones keep theirs; register's `realm_user_settings_defaults`
 * and the events follow, checked against Zulip 10.2's whole document.
 */
let server: TestServer;
const fullEvents = fullEventsSchema();
const validateDefaults = fullRegisterProperty("realm_user_settings_defaults");
const validateAnswer = zulipResponseSchema("full", "/realm/user_settings_defaults", "patch");

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

const patch = async (who: string, form: Record<string, string>) =>
  server.call("PATCH", "/api/v1/realm/user_settings_defaults", {
    ...authOf(await server.person(who)),
    form,
  });

const stateOf = async (auth: { auth: readonly [string, string] }, type: string) =>
  (
    await server.call("POST", "/api/v1/register", {
      ...auth,
      form: { fetch_event_types: JSON.stringify([type]) },
    })
  ).body;

it("sets defaults that new accounts start with, telling the realm", async () => {
  const hamlet = authOf(await server.person("hamlet"));
  const listen = await listenAs(server, hamlet, ["realm_user_settings_defaults"]);
  const before = (await stateOf(hamlet, "realm_user_settings_defaults"))
    .realm_user_settings_defaults as Record<string, unknown>;
  expect(validateDefaults(before)).toEqual([]);
  expect([before.emojiset, before.enter_sends]).toEqual(["google", false]);
  const reply = await patch("iago", {
    emojiset: "text",
    enter_sends: "true",
    web_font_size_px: "18",
    enable_drafts_synchronization: "false",
  });
  expect(reply.body).toEqual({ result: "success", msg: "" });
  expect(validateAnswer(reply.body)).toEqual([]);
  const events = await listen();
  expect(fullEvents({ events: events.map((e, id) => ({ id, ...e })) })).toEqual([]);
  // One event per setting that changed, in the settings' (alphabetical) order.
  expect(events.map((e) => [e.property, e.value])).toEqual([
    ["emojiset", "text"],
    ["enable_drafts_synchronization", false],
    ["enter_sends", true],
    ["web_font_size_px", 18],
  ]);
  const after = (await stateOf(hamlet, "realm_user_settings_defaults"))
    .realm_user_settings_defaults as Record<string, unknown>;
  expect(validateDefaults(after)).toEqual([]);
  expect(after).toEqual({
    ...before,
    emojiset: "text",
    enter_sends: true,
    web_font_size_px: 18,
    enable_drafts_synchronization: false,
  });
  // Hamlet keeps his own settings; a new account starts with the realm's.
  const own = (await stateOf(hamlet, "user_settings")).user_settings as Record<string, unknown>;
  expect([own.emojiset, own.enter_sends]).toEqual(["google", false]);
  const realm = await server.db.prisma.realm.findFirstOrThrow({ where: { subdomain: "" } });
  const fresh = await server.db.transaction((tx) =>
    createAccount(tx, { realmId: realm.id, email: "laertes@example.com", fullName: "Laertes" }),
  );
  const theirs = (await stateOf({ auth: ["laertes@example.com", fresh.apiKey] }, "user_settings"))
    .user_settings as Record<string, unknown>;
  expect([
    theirs.emojiset,
    theirs.enter_sends,
    theirs.web_font_size_px,
    theirs.enable_drafts_synchronization,
  ]).toEqual(["text", true, 18, false]);
  // The same values again change nothing and tell no one.
  expect((await patch("iago", { emojiset: "text" })).status).toBe(200);
  expect(await listen()).toEqual([]);
});

it("refuses bad values, identity settings and members, storing nothing", async () => {
  const stored = async () =>
    (await server.db.prisma.realm.findFirstOrThrow({ where: { subdomain: "" } }))
      .user_settings_defaults;
  const before = await stored();
  expect((await patch("iago", { emojiset: "comic", enter_sends: "false" })).body).toEqual(
    apiError("Invalid emojiset"),
  );
  expect((await patch("iago", { web_font_size_px: "big" })).status).toBe(400);
  expect((await patch("hamlet", { enter_sends: "false" })).body).toEqual(
    apiError("Must be an organization administrator", "UNAUTHORIZED_PRINCIPAL"),
  );
  // Not a default an organization sets: ignored, as Zulip ignores it.
  expect((await patch("iago", { timezone: "Europe/Paris" })).status).toBe(200);
  expect(await stored()).toEqual(before);
});
