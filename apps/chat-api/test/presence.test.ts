import { type Cast, type TestServer, apiError, loadCast, startTestServer } from "./support/server";
import { zulipResponseSchema } from "./support/zulip-schema";

const validateRealmPresence = zulipResponseSchema("subset", "/realm/presence", "get");
const validateUpdate = zulipResponseSchema("companions", "/users/me/presence", "post");
const validateEvents = zulipResponseSchema("companions", "/events", "get");

const PEOPLE = ["iago", "hamlet", "othello", "cordelia", "polonius", "hamlet-bot"];

describe("presence", () => {
  let server: TestServer;
  let cast: Cast;
  const as = (who: string) => cast.as(who);

  beforeAll(async () => {
    server = await startTestServer();
    cast = await loadCast(server, PEOPLE);
  });

  afterAll(() => server.close());

  const report = (who: string, form: Record<string, unknown>) =>
    server.call("POST", "/api/v1/users/me/presence", { ...as(who), form });

  /** A queue of `who` for presence events. */
  const presenceQueue = async (who: string): Promise<string> =>
    (
      await server.call("POST", "/api/v1/register", {
        ...as(who),
        form: { event_types: ["presence"] },
      })
    ).body.queue_id as string;

  it("records active and idle, reported as last sent, keyed by email", async () => {
    const before = Math.floor(Date.now() / 1000);
    const hamlet = await report("hamlet", { status: "active" });
    expect(hamlet.status).toBe(200);
    expect(validateUpdate(hamlet.body)).toEqual([]);
    await report("othello", { status: "idle" });
    const reply = await server.call("GET", "/api/v1/realm/presence", as("cordelia"));
    expect(validateRealmPresence(reply.body)).toEqual([]);
    const presences = reply.body.presences as Record<
      string,
      Record<string, Record<string, unknown>>
    >;
    expect(Object.keys(presences).sort()).toEqual(["hamlet@example.com", "othello@example.com"]);
    expect(presences["hamlet@example.com"]?.website).toMatchObject({
      client: "website",
      status: "active",
      pushable: false,
    });
    expect(presences["othello@example.com"]?.aggregated).toMatchObject({
      client: "website",
      status: "idle",
    });
    expect(presences["othello@example.com"]?.aggregated).not.toHaveProperty("pushable");
    expect(presences["hamlet@example.com"]?.website?.timestamp).toBeGreaterThanOrEqual(before);
    expect(typeof reply.body.server_timestamp).toBe("number");
  });

  it("leaves out bots, deactivated users and users not seen for 14 days", async () => {
    await report("cordelia", { status: "active" });
    await server.db.prisma.presence.create({
      data: {
        user_id: cast.id("hamlet-bot"),
        realm_id: (await server.db.prisma.realm.findFirstOrThrow()).id,
        last_connected_time: new Date(),
        last_active_time: new Date(),
      },
    });
    await server.db.prisma.presence.update({
      where: { user_id: cast.id("cordelia") },
      data: { last_connected_time: new Date(Date.now() - 15 * 86_400_000) },
    });
    await report("iago", { status: "active" });
    await server.db.prisma.user.update({
      where: { id: cast.id("iago") },
      data: { is_active: false },
    });
    try {
      const reply = await server.call("GET", "/api/v1/realm/presence", as("hamlet"));
      expect(Object.keys(reply.body.presences as object).sort()).toEqual([
        "hamlet@example.com",
        "othello@example.com",
      ]);
    } finally {
      await server.db.prisma.user.update({
        where: { id: cast.id("iago") },
        data: { is_active: true },
      });
    }
  });

  it("answers the modern format with last_update_id, and only newer changes", async () => {
    const first = await report("hamlet", { status: "active", last_update_id: -1 });
    expect(validateUpdate(first.body)).toEqual([]);
    const lastId = first.body.presence_last_update_id as number;
    expect(lastId).toBeGreaterThan(0);
    const presences = first.body.presences as Record<string, Record<string, number>>;
    expect(presences[String(cast.id("hamlet"))]).toEqual({
      active_timestamp: expect.any(Number) as number,
      idle_timestamp: expect.any(Number) as number,
    });
    await report("othello", { status: "active" });
    const next = await report("hamlet", { status: "active", last_update_id: lastId });
    expect(Object.keys(next.body.presences as object).sort()).toEqual(
      [String(cast.id("hamlet")), String(cast.id("othello"))].sort(),
    );
  });

  it("writes the modern presences with the bytes JSON.stringify gives, user ids ascending", async () => {
    for (const who of ["polonius", "cordelia", "iago"]) await report(who, { status: "idle" });
    const reply = await report("hamlet", { status: "active", last_update_id: -1 });
    const presences = reply.body.presences as Record<string, Record<string, number>>;
    const ids = Object.keys(presences);
    expect(ids.length).toBeGreaterThanOrEqual(4);
    // Ascending as numbers (an object's integer keys), not as text.
    expect(ids.map(Number)).toEqual(ids.map(Number).sort((a, b) => a - b));
    expect(reply.text).toBe(JSON.stringify(reply.body));
    // The stored times, as Unix seconds: idle has no active time of its own since the last active.
    const stored = await server.db.prisma.presence.findMany({
      where: { user_id: { in: ids.map(Number) } },
    });
    for (const row of stored)
      expect(presences[String(row.user_id)]).toEqual({
        active_timestamp:
          row.last_active_time === null ? 0 : Math.floor(row.last_active_time.getTime() / 1000),
        idle_timestamp: Math.floor(row.last_connected_time.getTime() / 1000),
      });
    expect(reply.body.presence_last_update_id).toBe(
      Math.max(
        ...(await server.db.prisma.presence.findMany()).map((p) => Number(p.last_update_id)),
      ),
    );
    // Nothing newer: an empty object, and the same last id.
    const none = await server.call("POST", "/api/v1/users/me/presence", {
      ...as("hamlet"),
      form: { status: "active", ping_only: false, last_update_id: 1_000_000_000 },
    });
    expect(none.text).toContain('"presences":{}');
    expect(none.body.presence_last_update_id).toBeGreaterThanOrEqual(
      reply.body.presence_last_update_id as number,
    );
  });

  it("answers a row written by any statement with that statement's times, under a new number (the database's)", async () => {
    await report("cordelia", { status: "active" });
    const seen = await report("hamlet", { status: "active", last_update_id: -1 });
    const lastId = seen.body.presence_last_update_id as number;
    const connected = new Date("2026-11-20T10:00:05.900Z");
    // No number given: the row takes the next one (trigger presences_write), so boards read it.
    const written = await server.db.prisma.presence.update({
      where: { user_id: cast.id("cordelia") },
      data: { last_connected_time: connected, last_active_time: null },
    });
    expect(written.last_update_id).toBeGreaterThan(lastId);
    expect(written.slim_entry).toBe(
      `"${String(cast.id("cordelia"))}":{"active_timestamp":0,"idle_timestamp":${String(Math.floor(connected.getTime() / 1000))}}`,
    );
    const reply = await report("hamlet", { status: "active", last_update_id: lastId });
    const presences = reply.body.presences as Record<string, unknown>;
    expect(presences[String(cast.id("cordelia"))]).toEqual({
      active_timestamp: 0,
      idle_timestamp: Math.floor(connected.getTime() / 1000),
    });
    expect(reply.body.presence_last_update_id).toBeGreaterThanOrEqual(written.last_update_id);
  });

  it("sends a presence event to the realm when a status changes", async () => {
    const queue = await presenceQueue("cordelia");
    await report("othello", { status: "idle" });
    await report("othello", { status: "idle" });
    const reply = await server.call("GET", "/api/v1/events", {
      ...as("cordelia"),
      query: { queue_id: queue, dont_block: true },
    });
    expect(validateEvents(reply.body)).toEqual([]);
    expect(reply.body.events).toMatchObject([
      {
        type: "presence",
        user_id: cast.id("othello"),
        email: "othello@example.com",
        presence: { website: { client: "website", status: "idle", pushable: false } },
      },
    ]);
  });

  it("tells the realm of a first ping, a return after 140 s away and a new status, not of a repeat", async () => {
    const queue = await presenceQueue("iago");
    const hamlet = cast.id("hamlet");
    const stored = () =>
      server.db.prisma.presence.findUniqueOrThrow({ where: { user_id: hamlet } });
    await server.db.prisma.presence.deleteMany({ where: { user_id: hamlet } });
    expect((await report("hamlet", { status: "active" })).status).toBe(200);
    const first = await stored();
    // A repeat: recorded (new times, a new update number), heard by no one.
    expect((await report("hamlet", { status: "active" })).status).toBe(200);
    const repeat = await stored();
    expect(repeat.last_update_id).toBeGreaterThan(first.last_update_id);
    expect(repeat.last_connected_time.getTime()).toBeGreaterThanOrEqual(
      first.last_connected_time.getTime(),
    );
    // Silent for longer than 140 s: the same status is news again.
    const away = new Date(Date.now() - 141_000);
    await server.db.prisma.presence.update({
      where: { user_id: hamlet },
      data: { last_connected_time: away, last_active_time: away },
    });
    expect((await report("hamlet", { status: "active" })).status).toBe(200);
    expect((await report("hamlet", { status: "idle" })).status).toBe(200);
    const idle = await stored();
    expect(idle.last_active_time?.getTime()).toBeLessThan(idle.last_connected_time.getTime());
    const reply = await server.call("GET", "/api/v1/events", {
      ...as("iago"),
      query: { queue_id: queue, dont_block: true },
    });
    expect(validateEvents(reply.body)).toEqual([]);
    const events = (
      reply.body.events as { user_id: number; presence: { website: { status: string } } }[]
    )
      .filter((event) => event.user_id === hamlet)
      .map((event) => event.presence.website.status);
    expect(events).toEqual(["active", "active", "idle"]);
  });

  it("refuses a bad status and bots", async () => {
    expect((await report("hamlet", { status: "away" })).body).toEqual(apiError("Invalid status"));
    expect((await report("hamlet", {})).body).toMatchObject({
      code: "REQUEST_VARIABLE_MISSING",
      msg: "Missing 'status' argument",
    });
    expect((await report("hamlet-bot", { status: "active" })).body).toEqual(
      apiError("This endpoint does not accept bot requests."),
    );
  });
});

describe("presence limited to accessible users (CAN_ACCESS_ALL_USERS_GROUP_LIMITS_PRESENCE)", () => {
  let server: TestServer;
  let cast: Cast;

  beforeAll(async () => {
    server = await startTestServer({
      env: { CHAT_CAN_ACCESS_ALL_USERS_GROUP_LIMITS_PRESENCE: "true" },
    });
    cast = await loadCast(server, PEOPLE);
    const realm = await server.db.prisma.realm.findFirstOrThrow();
    const members = await server.db.prisma.userGroup.findFirstOrThrow({
      where: { realm_id: realm.id, name: "role:members" },
    });
    await server.db.prisma.realm.update({
      where: { id: realm.id },
      data: { can_access_all_users_group_id: members.id },
    });
    // Othello shares no channel with Polonius once he leaves the public ones.
    await server.db.prisma.subscription.updateMany({
      where: { user_id: cast.id("othello") },
      data: { active: false },
    });
    for (const who of ["hamlet", "othello", "polonius"])
      await server.call("POST", "/api/v1/users/me/presence", {
        ...cast.as(who),
        form: { status: "active" },
      });
  });

  afterAll(() => server.close());

  it("shows a guest only the users they can access; members see everyone", async () => {
    const guest = await server.call("GET", "/api/v1/realm/presence", cast.as("polonius"));
    expect(Object.keys(guest.body.presences as object).sort()).toEqual([
      "hamlet@example.com",
      "polonius@example.com",
    ]);
    const member = await server.call("GET", "/api/v1/realm/presence", cast.as("cordelia"));
    expect(Object.keys(member.body.presences as object).sort()).toEqual([
      "hamlet@example.com",
      "othello@example.com",
      "polonius@example.com",
    ]);
  });

  it("limits the modern (last_update_id) answer the same way", async () => {
    const modern = async (who: string) =>
      (
        await server.call("POST", "/api/v1/users/me/presence", {
          ...cast.as(who),
          form: { status: "active", slim_presence: true, last_update_id: -1 },
        })
      ).body.presences as object;
    const ids = (...who: string[]) => who.map((w) => String(cast.id(w))).sort();
    expect(Object.keys(await modern("polonius")).sort()).toEqual(ids("hamlet", "polonius"));
    expect(Object.keys(await modern("cordelia")).sort()).toEqual(
      ids("hamlet", "othello", "polonius", "cordelia"),
    );
  });

  it("sends a presence event only to users who may see that presence", async () => {
    const register = async (who: string) =>
      (
        await server.call("POST", "/api/v1/register", {
          ...cast.as(who),
          form: { event_types: ["presence"] },
        })
      ).body.queue_id as string;
    const [guestQueue, memberQueue] = [await register("polonius"), await register("cordelia")];
    // Othello goes idle: Cordelia (a member) may see it, Polonius (a guest sharing no channel) not.
    await server.call("POST", "/api/v1/users/me/presence", {
      ...cast.as("othello"),
      form: { status: "idle" },
    });
    const events = async (who: string, queue: string) =>
      (
        await server.call("GET", "/api/v1/events", {
          ...cast.as(who),
          query: { queue_id: queue, dont_block: true },
        })
      ).body.events as { type: string; email?: string }[];
    expect((await events("cordelia", memberQueue)).map((e) => e.email)).toEqual([
      "othello@example.com",
    ]);
    expect(await events("polonius", guestQueue)).toEqual([]);
    // Hamlet shares a channel with the guest: his change reaches her.
    await server.call("POST", "/api/v1/users/me/presence", {
      ...cast.as("hamlet"),
      form: { status: "idle" },
    });
    expect((await events("polonius", guestQueue)).map((e) => e.email)).toEqual([
      "hamlet@example.com",
    ]);
  });
});

describe("presence events in a big realm (CHAT_PRESENCE_EVENTS_USER_LIMIT)", () => {
  let server: TestServer;
  let cast: Cast;

  beforeAll(async () => {
    // The demo realm's active users are more than 3: it counts as big here.
    server = await startTestServer({ env: { CHAT_PRESENCE_EVENTS_USER_LIMIT: "3" } });
    cast = await loadCast(server, PEOPLE);
  });

  afterAll(() => server.close());

  it("sends no presence event past the limit; the minute's ping tells of the change", async () => {
    const queue = (
      await server.call("POST", "/api/v1/register", {
        ...cast.as("cordelia"),
        form: { event_types: ["presence", "message"] },
      })
    ).body.queue_id as string;
    const seen = (
      await server.call("POST", "/api/v1/users/me/presence", {
        ...cast.as("cordelia"),
        form: { status: "active", last_update_id: -1 },
      })
    ).body.presence_last_update_id as number;
    await server.call("POST", "/api/v1/users/me/presence", {
      ...cast.as("othello"),
      form: { status: "active" },
    });
    // A message after the change: the queue has it, and nothing about presence.
    await server.call("POST", "/api/v1/messages", {
      ...cast.as("othello"),
      form: { type: "direct", to: JSON.stringify([cast.id("cordelia")]), content: "hi" },
    });
    const events = (
      await server.call("GET", "/api/v1/events", {
        ...cast.as("cordelia"),
        query: { queue_id: queue, last_event_id: -1, dont_block: true },
      })
    ).body.events as { type: string }[];
    expect(events.map((e) => e.type)).toEqual(["message"]);
    const ping = await server.call("POST", "/api/v1/users/me/presence", {
      ...cast.as("cordelia"),
      form: { status: "active", last_update_id: seen },
    });
    // Changes since her last ping: Othello's, and her own (this ping).
    expect(Object.keys(ping.body.presences as object).sort()).toEqual(
      [cast.id("othello"), cast.id("cordelia")].map(String).sort(),
    );
  });
});
