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

it("refuses a blank or long name and members, changing nothing", async () => {
  expect((await patch("iago", { name: " " })).body).toEqual(
    apiError("Organization name can't be empty."),
  );
  expect((await patch("iago", { name: "x".repeat(41) })).body).toEqual(
    apiError("Organization name is too long."),
  );
  expect((await patch("hamlet", { name: "Mine" })).body).toEqual(
    apiError("Must be an organization administrator", "UNAUTHORIZED_PRINCIPAL"),
  );
  expect(await realmName()).toBe("Elsinore");
});
