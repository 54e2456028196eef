import { type TestServer, apiError, authOf, listenAs, startTestServer } from "./support/server";
import { eventsSchema, registerStateProperty } from "./support/zulip-schema";

/**
 * Navigation views (feature level 390): GET, POST /navigation_views and
 * PATCH, DELETE /navigation_views/{fragment}; a person's own, told to their
 * clients as `navigation_view` events and listed in register's state.
 */
let server: TestServer;
const validateEvents = eventsSchema();
const validateViews = registerStateProperty("navigation_views");

beforeAll(async () => {
  server = await startTestServer({ env: { CHAT_MAX_OBJECTS_PER_USER: "5" } });
});
afterAll(() => server.close());

const as = async (who: string) => authOf(await server.person(who));
const add = async (who: string, form: Record<string, string>) =>
  server.call("POST", "/api/v1/navigation_views", { ...(await as(who)), form });
const list = async (who: string) =>
  (await server.call("GET", "/api/v1/navigation_views", await as(who))).body;

it("adds, edits and removes views, telling only their owner, and register lists them", async () => {
  const listen = await listenAs(server, await as("hamlet"), ["navigation_view"]);
  const othersListen = await listenAs(server, await as("othello"), ["navigation_view"]);
  expect((await add("hamlet", { fragment: "inbox", is_pinned: "false" })).body).toEqual({
    result: "success",
    msg: "",
  });
  const custom = { fragment: "narrow/channel/1-Denmark/topic/castle", is_pinned: "true" };
  expect((await add("hamlet", { ...custom, name: "  Castle  " })).body.result).toBe("success");
  const edited = await server.call("PATCH", `/api/v1/navigation_views/${custom.fragment}`, {
    ...(await as("hamlet")),
    form: { name: "Elsinore", is_pinned: "false" },
  });
  expect(edited.body).toEqual({ result: "success", msg: "" });
  const listed = await list("hamlet");
  expect(listed).toEqual({
    result: "success",
    msg: "",
    navigation_views: [
      { fragment: "inbox", is_pinned: false, name: null },
      { fragment: custom.fragment, is_pinned: false, name: "Elsinore" },
    ],
  });
  expect(validateViews(listed.navigation_views)).toEqual([]);
  const state = await server.call("POST", "/api/v1/register", {
    ...(await as("hamlet")),
    form: { fetch_event_types: JSON.stringify(["navigation_views"]) },
  });
  expect(state.body.navigation_views).toEqual(listed.navigation_views);
  expect((await list("othello")).navigation_views).toEqual([]);
  const removed = await server.call("DELETE", "/api/v1/navigation_views/inbox", await as("hamlet"));
  expect(removed.body).toEqual({ result: "success", msg: "" });
  const events = await listen();
  expect(validateEvents({ events: events.map((e, n) => ({ id: n, ...e })) })).toEqual([]);
  expect(events).toEqual([
    {
      type: "navigation_view",
      op: "add",
      navigation_view: { fragment: "inbox", is_pinned: false, name: null },
    },
    {
      type: "navigation_view",
      op: "add",
      navigation_view: { fragment: custom.fragment, is_pinned: true, name: "Castle" },
    },
    {
      type: "navigation_view",
      op: "update",
      fragment: custom.fragment,
      data: { name: "Elsinore", is_pinned: false },
    },
    { type: "navigation_view", op: "remove", fragment: "inbox" },
  ]);
  expect(await othersListen()).toEqual([]);
});

it("refuses what Zulip refuses and what exceeds the caps, storing nothing", async () => {
  expect((await add("cordelia", { fragment: "recent", is_pinned: "true" })).body.result).toBe(
    "success",
  );
  expect(
    (await add("cordelia", { fragment: "narrow/is/alerted", is_pinned: "true", name: "Alerts" }))
      .body.result,
  ).toBe("success");
  const before = await server.db.prisma.navigationView.count();
  const cases: [Record<string, string>, ReturnType<typeof apiError>][] = [
    [
      { fragment: "feed", is_pinned: "true", name: "Mine" },
      apiError("Built-in views cannot have a custom name."),
    ],
    [
      { fragment: "narrow/is/private", is_pinned: "true" },
      apiError("Custom views must have a valid name."),
    ],
    [
      { fragment: "narrow/is/private", is_pinned: "true", name: " " },
      apiError("Custom views must have a valid name."),
    ],
    [{ fragment: "recent", is_pinned: "false" }, apiError("Navigation view already exists.")],
    [
      { fragment: "narrow/is/unread", is_pinned: "true", name: "Alerts" },
      apiError("Navigation view already exists."),
    ],
    [{ fragment: " ", is_pinned: "true" }, apiError("fragment cannot be blank")],
    [
      { fragment: "x".repeat(1001), is_pinned: "true", name: "Long" },
      apiError("fragment is too long (limit: 1000 characters)"),
    ],
    [
      { fragment: "narrow/is/unread", is_pinned: "true", name: "n".repeat(101) },
      apiError("name is too long (limit: 100 characters)"),
    ],
    [
      { fragment: "narrow/is/unread", is_pinned: "maybe", name: "Unread" },
      apiError("is_pinned is not a boolean"),
    ],
  ];
  for (const [form, expected] of cases)
    expect((await add("cordelia", form)).body).toEqual(expected);
  const patch = async (fragment: string, form: Record<string, string>) =>
    (
      await server.call("PATCH", `/api/v1/navigation_views/${fragment}`, {
        ...(await as("cordelia")),
        form,
      })
    ).body;
  expect(await patch("recent", { name: "Mine" })).toEqual(
    apiError("Built-in views cannot have a custom name."),
  );
  expect(await patch("narrow/is/alerted", { name: "Alerts" })).toEqual(
    apiError("Navigation view already exists."),
  );
  expect(await patch("narrow/is/nothing", { is_pinned: "true" })).toEqual(
    apiError("Navigation view does not exist."),
  );
  // Another person's view is as unknown as one that never was.
  const othersDelete = await server.call(
    "DELETE",
    "/api/v1/navigation_views/recent",
    await as("hamlet"),
  );
  expect(othersDelete.status).toBe(404);
  expect(othersDelete.body).toEqual(apiError("Navigation view does not exist."));
  expect(await server.db.prisma.navigationView.count()).toBe(before);
  for (const n of [1, 2, 3])
    expect(
      (await add("cordelia", { fragment: `narrow/search/${n}`, is_pinned: "true", name: `S${n}` }))
        .body.result,
    ).toBe("success");
  const over = await add("cordelia", {
    fragment: "narrow/search/4",
    is_pinned: "true",
    name: "S4",
  });
  expect(over.status).toBe(400);
  expect(over.body).toEqual(apiError("You have too many navigation views (limit: 5)."));
  expect((await list("cordelia")).navigation_views).toHaveLength(5);
});
