import { setTimeout as sleep } from "node:timers/promises";
import { sql } from "kysely";
import { PresenceBoards } from "../src/caches/presence-boards";
import { type Cast, type TestServer, loadCast, startTestServer } from "./support/server";

/**
 * The modern presence answer comes from each replica's board of the realm
 * (src/lib/presence-boards.ts), which reads only the rows numbered since its
 * last read. These tests compare its answers with the rows themselves, after
 * writes of every kind, and make the case its reads must not miss: a row that
 * appears under a number below one a read has already seen (a write that
 * committed after a write numbered later).
 */
const PEOPLE = ["iago", "hamlet", "othello", "cordelia", "polonius", "prospero", "hamlet-bot"];
const DAY_MS = 86_400_000;

/** A PRNG with a fixed seed (mulberry32), so that a failure can be run again. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

describe("presence boards", () => {
  let server: TestServer;
  let cast: Cast;
  let realmId: number;

  beforeAll(async () => {
    server = await startTestServer();
    cast = await loadCast(server, PEOPLE);
    realmId = (await server.db.prisma.user.findUniqueOrThrow({ where: { id: cast.id("hamlet") } }))
      .realm_id;
  });

  afterAll(() => server.close());

  const report = (who: string, form: Record<string, unknown>) =>
    server.call("POST", "/api/v1/users/me/presence", { ...cast.as(who), form });

  /** The answer the rows give: shown users seen in 14 days, numbered after `after`, by user id. */
  async function fromRows(after: number): Promise<{ json: string; newest: number }> {
    const rows = await sql<{
      user_id: number;
      last_update_id: number;
      slim_entry: string;
      last_connected_time: Date;
      shown: boolean;
    }>`SELECT p.user_id, p.last_update_id::float8 AS last_update_id, p.slim_entry, p.last_connected_time,
              u.is_active AND NOT u.is_bot AS shown
       FROM presences p JOIN users u ON u.id = p.user_id
       WHERE p.realm_id = ${realmId}`.execute(server.db.q);
    const since = Date.now() - 14 * DAY_MS;
    const entries = rows.rows
      .filter(
        (r) => r.shown && r.last_connected_time.getTime() >= since && r.last_update_id > after,
      )
      .sort((x, y) => x.user_id - y.user_id)
      .map((r) => r.slim_entry);
    const newest = Math.max(-1, ...rows.rows.map((r) => r.last_update_id));
    return { json: `{${entries.join(",")}}`, newest };
  }

  it("answers what the rows say, after pings, writes by hand, deactivations and old rows", async () => {
    const next = random(25);
    const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)] as T;
    const humans = PEOPLE.filter((p) => p !== "hamlet-bot");
    const seenIds = [-1];
    const inactive = new Set<string>();
    for (let round = 0; round < 40; round++) {
      const who = pick(humans);
      const kind = next();
      if (kind < 0.5 && !inactive.has(who)) {
        expect((await report(who, { status: next() < 0.5 ? "active" : "idle" })).status).toBe(200);
      } else if (kind < 0.65) {
        // A write by hand: times from the last 20 days (some past the 14-day window).
        await server.db.prisma.presence.updateMany({
          where: { user_id: cast.id(who) },
          data: { last_connected_time: new Date(Date.now() - next() * 20 * DAY_MS) },
        });
      } else if (kind < 0.8 && who !== "hamlet") {
        // Deactivated or reactivated by hand, not through the API: the trigger renumbers.
        await server.db.prisma.user.update({
          where: { id: cast.id(who) },
          data: { is_active: inactive.has(who) },
        });
        if (inactive.has(who)) inactive.delete(who);
        else inactive.add(who);
      } else if (kind < 0.85) {
        await server.db.prisma.presence.upsert({
          where: { user_id: cast.id("hamlet-bot") },
          create: {
            user_id: cast.id("hamlet-bot"),
            realm_id: realmId,
            last_connected_time: new Date(),
          },
          update: { last_connected_time: new Date() },
        });
      }
      const after = pick(seenIds);
      const reply = await report("hamlet", { status: "active", last_update_id: after });
      expect(reply.status).toBe(200);
      const expected = await fromRows(after);
      expect(reply.text).toContain(`"presences":${expected.json}`);
      expect(reply.body.presence_last_update_id).toBe(expected.newest);
      seenIds.push(reply.body.presence_last_update_id as number);
    }
    await server.db.prisma.user.updateMany({
      where: { id: { in: humans.map((p) => cast.id(p)) } },
      data: { is_active: true },
    });
  });

  it("shares one read among concurrent answers, each as of a read sent after it was asked", async () => {
    const boards = new PresenceBoards(server.db);
    const all = { after: undefined, sinceMs: Date.now() - 14 * DAY_MS, only: undefined };
    await boards.answer(realmId, all);
    const written = await server.db.prisma.presence.update({
      where: { user_id: cast.id("othello") },
      data: { last_connected_time: new Date() },
    });
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => boards.answer(realmId, all)),
    );
    for (const answer of answers) {
      expect(answer.newest).toBeGreaterThanOrEqual(written.last_update_id);
      expect(answer.json).toContain(written.slim_entry);
    }
  });

  it("reads a row that appears under a number below one it has seen", async () => {
    const window = 1000;
    const boards = new PresenceBoards(server.db, window);
    const all = { after: undefined, sinceMs: Date.now() - 14 * DAY_MS, only: undefined };
    const sequence = async (value: number) =>
      sql`SELECT setval('presence_update_id_seq', ${value})`.execute(server.db.q);
    const pause = (ms: number) => sleep(ms);
    expect((await report("cordelia", { status: "active" })).status).toBe(200);
    // Two reads of everything, more than the window apart: the next read reads what changed.
    await boards.answer(realmId, all);
    await pause(window + 100);
    const base = (await boards.answer(realmId, all)).newest;
    // Othello's write takes a number far ahead, and a read sees it.
    await sequence(base + 1000);
    await report("othello", { status: "active" });
    const ahead = await boards.answer(realmId, all);
    expect(ahead.newest).toBeGreaterThan(base + 1000);
    // Cordelia's write then appears under a lower number (as a write that
    // took its number first and committed last): the next read must read it.
    await sequence(base + 10);
    const late = await server.db.prisma.presence.update({
      where: { user_id: cast.id("cordelia") },
      data: { last_connected_time: new Date(Date.now() - 1000), last_active_time: null },
    });
    expect(late.last_update_id).toBeLessThan(ahead.newest);
    await sequence(base + 2000);
    const after = await boards.answer(realmId, all);
    expect(after.json).toContain(late.slim_entry);
    expect(after.json).toBe((await fromRows(-1)).json);
  });

  it("numbers past 2^31 (one sequence for every realm: a busy server's, within a year)", async () => {
    const start = 2 ** 31 + 5;
    await sql`SELECT setval('presence_update_id_seq', ${start})`.execute(server.db.q);
    const first = await report("othello", { status: "active", last_update_id: -1 });
    expect(first.status).toBe(200);
    const newest = first.body.presence_last_update_id as number;
    expect(newest).toBeGreaterThan(start);
    expect(newest).toBe((await fromRows(-1)).newest);
    // A client that has seen it asks for what is newer: Cordelia's write only.
    expect((await report("cordelia", { status: "active" })).status).toBe(200);
    const next = await report("othello", { status: "active", last_update_id: newest });
    expect(next.body.presence_last_update_id).toBeGreaterThan(newest);
    expect(Object.keys(next.body.presences as object)).toEqual(
      expect.arrayContaining([String(cast.id("cordelia"))]),
    );
    expect(JSON.stringify(next.body.presences)).toBe((await fromRows(newest)).json);
  });
});
