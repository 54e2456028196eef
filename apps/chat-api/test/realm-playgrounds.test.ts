import { type TestServer, apiError, authOf, listenAs, startTestServer } from "./support/server";
import { fullEventsSchema, zulipResponseSchema } from "./support/zulip-schema";

/**
 * POST /realm/playgrounds and DELETE /realm/playgrounds/{playground_id}
 * (feature level 49): administrators configure code playgrounds; the realm
 * gets the whole list as `realm_playgrounds` and in register's state.
 */
let server: TestServer;
const fullEvents = fullEventsSchema();
const validateAdd = zulipResponseSchema("full", "/realm/playgrounds", "post");
const validateRemove = zulipResponseSchema("full", "/realm/playgrounds/{playground_id}", "delete");

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

const add = async (who: string, form: Record<string, string>) =>
  server.call("POST", "/api/v1/realm/playgrounds", {
    ...authOf(await server.person(who)),
    form,
  });

const rust = {
  name: "Rust playground",
  pygments_language: "Rust",
  url_template: "https://play.rust-lang.org/?edition=2021&code={code}",
};

it("adds and removes a playground, telling the realm, and register lists them", async () => {
  const listen = await listenAs(server, authOf(await server.person("othello")), [
    "realm_playgrounds",
  ]);
  const added = await add("iago", rust);
  expect(added.status).toBe(200);
  expect(validateAdd(added.body)).toEqual([]);
  const id = added.body.id as number;
  const state = await server.call("POST", "/api/v1/register", {
    ...authOf(await server.person("hamlet")),
    form: { fetch_event_types: JSON.stringify(["realm_playgrounds"]) },
  });
  expect(state.body.realm_playgrounds).toEqual([{ id, ...rust }]);
  const removed = await server.call(
    "DELETE",
    `/api/v1/realm/playgrounds/${id}`,
    authOf(await server.person("iago")),
  );
  expect(removed.body).toEqual({ result: "success", msg: "" });
  expect(validateRemove(removed.body)).toEqual([]);
  const events = await listen();
  expect(fullEvents({ events: events.map((e, n) => ({ id: n, ...e })) })).toEqual([]);
  expect(events).toEqual([
    { type: "realm_playgrounds", realm_playgrounds: [{ id, ...rust }] },
    { type: "realm_playgrounds", realm_playgrounds: [] },
  ]);
});

it("refuses bad playgrounds, duplicates and members, storing nothing", async () => {
  expect((await add("iago", rust)).body).toMatchObject({ result: "success" });
  const before = await server.db.prisma.realmPlayground.count();
  const cases: [Record<string, string>, ReturnType<typeof apiError>][] = [
    [
      rust,
      apiError("Realm playground with this Realm, Pygments language and Name already exists."),
    ],
    [{ ...rust, name: " " }, apiError("Name cannot be blank.")],
    [
      { ...rust, pygments_language: "Rust<script>" },
      apiError("Invalid characters in pygments language"),
    ],
    [
      { ...rust, url_template: "https://play.example.com/{code" },
      apiError("Invalid URL template."),
    ],
    [
      { ...rust, url_template: "https://play.example.com/{code}/{version}" },
      apiError('"code" should be the only variable present in the URL template'),
    ],
    [
      { ...rust, name: "Evil", url_template: "javascript:alert({code})" },
      apiError(
        "Invalid URL template: it must start with http://, https:// or / (a link on this server).",
      ),
    ],
  ];
  for (const [form, answer] of cases)
    expect([form, (await add("iago", form)).body]).toEqual([form, answer]);
  expect((await add("hamlet", { ...rust, name: "Mine" })).body).toEqual(
    apiError("Must be an organization administrator", "UNAUTHORIZED_PRINCIPAL"),
  );
  const unknown = await server.call(
    "DELETE",
    "/api/v1/realm/playgrounds/999999",
    authOf(await server.person("iago")),
  );
  expect(unknown.body).toEqual(apiError("Invalid playground"));
  expect(await server.db.prisma.realmPlayground.count()).toBe(before);
});
