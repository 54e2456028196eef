import { type TestServer, apiError, authOf, listenAs, startTestServer } from "./support/server";
import { fullEventsSchema, zulipResponseSchema } from "./support/zulip-schema";

/**
 * GET /export/realm/consents (feature level 295) and the
 * `realm_export_consent` event: who consents to administrators exporting
 * their private data, from their `allow_private_data_export` setting.
 */
let server: TestServer;
const fullEvents = fullEventsSchema();
const validateAnswer = zulipResponseSchema("full", "/export/realm/consents", "get");

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

const consents = async (who: string) =>
  server.call("GET", "/api/v1/export/realm/consents", authOf(await server.person(who)));

it("lists each active human's consent, and tells administrators of a change", async () => {
  const hamlet = await server.person("hamlet");
  const first = await consents("iago");
  expect(validateAnswer(first.body)).toEqual([]);
  const humans = await server.db.prisma.user.findMany({
    where: { realm: { subdomain: "" }, is_active: true, is_bot: false },
    orderBy: { id: "asc" },
  });
  expect(first.body.export_consents).toEqual(
    humans.map((u) => ({ user_id: u.id, consented: false })),
  );
  const admin = await listenAs(server, authOf(await server.person("iago")), [
    "realm_export_consent",
  ]);
  const member = await listenAs(server, authOf(await server.person("othello")), [
    "realm_export_consent",
  ]);
  const changed = await server.call("PATCH", "/api/v1/settings", {
    ...authOf(hamlet),
    form: { allow_private_data_export: "true" },
  });
  expect(changed.status).toBe(200);
  const events = await admin();
  expect(fullEvents({ events: events.map((e, id) => ({ id, ...e })) })).toEqual([]);
  expect(events).toEqual([{ type: "realm_export_consent", user_id: hamlet.id, consented: true }]);
  expect(await member()).toEqual([]);
  const after = (await consents("iago")).body.export_consents as {
    user_id: number;
    consented: boolean;
  }[];
  expect(after.filter((c) => c.consented).map((c) => c.user_id)).toEqual([hamlet.id]);
});

it("is for administrators only", async () => {
  expect((await consents("hamlet")).body).toEqual(
    apiError("Must be an organization administrator", "UNAUTHORIZED_PRINCIPAL"),
  );
});
