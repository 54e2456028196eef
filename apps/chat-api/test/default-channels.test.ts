import { defaultChannelGroups } from "../src/actions/realm-creation";
import {
  type TestServer,
  apiError,
  authOf,
  channelIds,
  createOtherRealm,
  listenAs,
  startTestServer,
} from "./support/server";

/**
 * POST and DELETE /default_streams: the channels new users are subscribed to,
 * changed by administrators, with the `default_streams` event (ids, feature
 * level 330) and register's `realm_default_streams` following.
 */
let server: TestServer;
let channels: Record<string, number>;

beforeAll(async () => {
  server = await startTestServer();
  channels = await channelIds(server);
});

afterAll(() => server.close());

const call = async (who: string, method: string, streamId: number) =>
  server.call(method, "/api/v1/default_streams", {
    ...authOf(await server.person(who)),
    form: { stream_id: String(streamId) },
  });

const defaults = async () =>
  (
    await server.db.prisma.channel.findMany({
      where: { is_default_stream: true, realm: { subdomain: "" } },
      select: { id: true },
      orderBy: { id: "asc" },
    })
  ).map((c) => c.id);

it("adds and removes a default channel, telling the realm, and register follows", async () => {
  const scotland = channels.Scotland ?? 0;
  await call("iago", "DELETE", scotland);
  const before = await defaults();
  expect(before).not.toContain(scotland);
  const listen = await listenAs(server, authOf(await server.person("othello")), [
    "default_streams",
  ]);
  const added = await call("iago", "POST", scotland);
  expect([added.status, added.body]).toEqual([200, { result: "success", msg: "" }]);
  const withIt = [...before, scotland].sort((a, b) => a - b);
  expect(await defaults()).toEqual(withIt);
  // Adding it again changes nothing and tells no one.
  expect((await call("iago", "POST", scotland)).status).toBe(200);
  const removed = await call("iago", "DELETE", scotland);
  expect(removed.status).toBe(200);
  expect(await listen()).toEqual([
    { type: "default_streams", default_streams: withIt },
    { type: "default_streams", default_streams: before },
  ]);
  const state = await server.call("POST", "/api/v1/register", {
    ...authOf(await server.person("othello")),
    form: { fetch_event_types: JSON.stringify(["default_streams"]) },
  });
  expect(state.body.realm_default_streams).toEqual(before);
});

it("refuses members, private channels and unknown ones, changing nothing", async () => {
  const before = await defaults();
  const byMember = await call("hamlet", "POST", channels.Scotland ?? 0);
  expect(byMember.status).toBe(400);
  expect(byMember.body.code).toBe("UNAUTHORIZED_PRINCIPAL");
  expect((await call("iago", "POST", channels["core team"] ?? 0)).body).toEqual(
    apiError("Private channels cannot be made default."),
  );
  expect((await call("iago", "POST", 999_999)).body).toEqual(apiError("Invalid channel ID"));
  expect(await defaults()).toEqual(before);
});

it("answers another realm's channel, an id past int32 and a repeated add as Zulip would", async () => {
  const other = await createOtherRealm(server);
  const heath = await server.db.prisma.channel.create({
    data: {
      realm_id: other.realmId,
      name: "Heath",
      ...defaultChannelGroups(other.groups),
    },
  });
  const before = await defaults();
  expect((await call("iago", "POST", heath.id)).body).toEqual(apiError("Invalid channel ID"));
  const huge = await server.call("POST", "/api/v1/default_streams", {
    ...authOf(await server.person("iago")),
    form: { stream_id: "2147483648" },
  });
  expect(huge.status).toBe(400);
  const denmark = channels.Denmark ?? 0;
  const repeated = await Promise.all(
    Array.from({ length: 5 }, () => call("iago", "POST", denmark)),
  );
  expect(repeated.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
  expect(await defaults()).toEqual([...new Set([...before, denmark])].sort((a, b) => a - b));
  expect(
    (await server.db.prisma.channel.findUniqueOrThrow({ where: { id: heath.id } }))
      .is_default_stream,
  ).toBe(false);
});
