import { randomBytes } from "node:crypto";
import { type Cast, type TestServer, listenAs, loadCast, startTestServer } from "./support/server";

/**
 * A channel of a big organization (issue 49): creating it with 5,000
 * subscribers, or subscribing 5,000 people at once, is a few statements
 * whatever their number (it used to be a row and an event each, with every
 * event listing every subscriber, past Prisma's transaction timeout).
 */
const PEOPLE = 5000;

let server: TestServer;
let cast: Cast;
let crowd: number[];

beforeAll(async () => {
  server = await startTestServer();
  cast = await loadCast(server, ["iago"]);
  const realm = await server.db.prisma.realm.findFirstOrThrow({ where: { subdomain: "" } });
  await server.db.prisma.user.createMany({
    data: Array.from({ length: PEOPLE }, (_, i) => ({
      realm_id: realm.id,
      email: `crowd${String(i)}@example.com`,
      delivery_email: `crowd${String(i)}@example.com`,
      full_name: `Crowd ${String(i)}`,
      api_key: randomBytes(16).toString("hex"),
    })),
  });
  crowd = (
    await server.db.prisma.user.findMany({
      where: { email: { startsWith: "crowd" } },
      select: { id: true },
    })
  ).map((u) => u.id);
}, 60_000);

afterAll(() => server.close());

/** Subscription events written since `after` (rows of the event log). */
const subscriptionRows = (after: bigint) =>
  server.db.prisma.eventLog.findMany({
    where: { id: { gt: after }, event_type: "subscription" },
    select: { user_ids: true, payload: true },
  });

const lastEventId = async () =>
  (await server.db.prisma.eventLog.findFirst({ orderBy: { id: "desc" }, select: { id: true } }))
    ?.id ?? 0n;

it(`creates a channel with ${String(PEOPLE)} subscribers in a few statements`, async () => {
  const before = await lastEventId();
  const listen = await listenAs(server, cast.as("iago"), ["subscription"]);
  const reply = await server.call("POST", "/api/v1/channels/create", {
    ...cast.as("iago"),
    form: { name: "everyone at once", subscribers: JSON.stringify([cast.id("iago"), ...crowd]) },
  });
  expect(reply.status).toBe(200);
  const channelId = reply.body.id as number;
  expect(await server.db.prisma.subscription.count({ where: { channel_id: channelId } })).toBe(
    PEOPLE + 1,
  );
  // One `add` row for all the alike subscriptions (and a `peer_add` for the others).
  const rows = await subscriptionRows(before);
  const adds = rows.filter((r) => (r.payload as { op: string }).op === "add");
  expect(adds).toHaveLength(1);
  expect(adds[0]?.user_ids).toHaveLength(PEOPLE + 1);
  // Each subscriber's clients still get the subscription with its subscribers.
  const [event] = await listen();
  const [subscription] = (event as { subscriptions: { subscribers: number[] }[] }).subscriptions;
  expect(subscription?.subscribers).toHaveLength(PEOPLE + 1);
}, 60_000);

it("subscribes the most people one request may name (1,000) to a channel in a few statements", async () => {
  const created = await server.call("POST", "/api/v1/channels/create", {
    ...cast.as("iago"),
    form: { name: "joined later", subscribers: JSON.stringify([cast.id("iago")]) },
  });
  const subscribe = (principals: number[]) =>
    server.call("POST", "/api/v1/users/me/subscriptions", {
      ...cast.as("iago"),
      form: {
        subscriptions: JSON.stringify([{ name: "joined later" }]),
        principals: JSON.stringify(principals),
      },
    });
  expect((await subscribe(crowd)).body).toMatchObject({ msg: "Too many users (limit: 1000)" });
  const before = await lastEventId();
  const some = crowd.slice(0, 1000);
  const reply = await subscribe(some);
  expect(reply.status).toBe(200);
  expect(
    await server.db.prisma.subscription.count({
      where: { channel_id: created.body.id as number },
    }),
  ).toBe(some.length + 1);
  // Asked again, they are all already subscribed.
  const again = await subscribe(some);
  expect(Object.keys(again.body.already_subscribed as object)).toHaveLength(some.length);
  const adds = (await subscriptionRows(before)).filter(
    (r) => (r.payload as { op: string }).op === "add",
  );
  expect(adds.length).toBeLessThanOrEqual(2);
}, 60_000);
