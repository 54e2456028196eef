import { setTimeout as sleep } from "node:timers/promises";
import { TRANSACTION_ATTEMPTS } from "../src/db/database";
import { isDatabaseUnavailable, isTransactionConflict } from "../src/db/unavailable";
import { TEST_DB_KIND, type TestDatabase, freshDatabase } from "./support/database";
import {
  type Cast,
  type TestServer,
  channelIds,
  listenAs,
  loadCast,
  startTestServer,
} from "./support/server";

/**
 * Transactions that lose a conflict (a deadlock's victim) run again instead
 * of failing their request, and sends to overlapping audiences, all at once,
 * neither fail nor lose nor duplicate an event. On PGlite (one
 * connection, transactions one after another) there is no conflict to lose;
 * the same tests check that nothing is run twice there.
 */
describe("a transaction PostgreSQL picks as a deadlock's victim", () => {
  let db: TestDatabase;

  beforeAll(async () => {
    db = await freshDatabase("seeded");
  });

  afterAll(() => db.close());

  it("runs again, and both transactions commit", async () => {
    const [a, b] = (
      await db.prisma.user.findMany({ take: 2, orderBy: { id: "asc" }, select: { id: true } })
    ).map((u) => u.id);
    let runs = 0;
    let locked = 0;
    /** Locks `first`, waits (up to 500 ms) for the other to lock its first, then locks `second`. */
    const crossing = (first: number, second: number, name: string) =>
      db.transaction(async (tx) => {
        runs += 1;
        const lock = (id: number) =>
          tx.q.selectFrom("users").select("id").where("id", "=", id).forUpdate().execute();
        await lock(first);
        locked += 1;
        for (let waited = 0; locked < 2 && waited < 500; waited += 10) await sleep(10);
        await lock(second);
        await tx.q.updateTable("users").set({ full_name: name }).where("id", "=", first).execute();
      });
    await Promise.all([crossing(a ?? 0, b ?? 0, "first"), crossing(b ?? 0, a ?? 0, "second")]);
    // PostgreSQL aborted one of the two (it deadlocked); it ran again and committed.
    expect(runs).toBe(TEST_DB_KIND === "postgres" ? 3 : 2);
    const names = await db.prisma.user.findMany({
      where: { id: { in: [a ?? 0, b ?? 0] } },
      orderBy: { id: "asc" },
      select: { full_name: true },
    });
    expect(names.map((n) => n.full_name)).toEqual(["first", "second"]);
  });

  it("is told apart from other errors", () => {
    expect(isTransactionConflict({ code: "40P01", message: "deadlock detected" })).toBe(true);
    expect(
      isTransactionConflict({ meta: { driverAdapterError: { cause: { originalCode: "40001" } } } }),
    ).toBe(true);
    expect(isTransactionConflict({ code: "23505", message: "duplicate key" })).toBe(false);
    expect(isTransactionConflict(new Error("Invalid message(s)"))).toBe(false);
    expect(TRANSACTION_ATTEMPTS).toBeGreaterThan(1);
  });

  it("that waited past its maxWait for a connection is the database being unavailable (503), not a defect", async () => {
    // More transactions at once than the pool has connections (4 in the
    // tests on PostgreSQL, PGlite's one), each holding its connection 700 ms:
    // those that wait more than 100 ms for one fail, and say why.
    const holding = Array.from({ length: 5 }, () =>
      db.transaction(
        async (tx) => {
          await tx.q.selectFrom("users").select("id").limit(1).execute();
          await sleep(700);
        },
        { maxWait: 100, timeout: 5000 },
      ),
    );
    const outcomes = await Promise.allSettled(holding);
    const failures: unknown[] = outcomes.flatMap((o): unknown[] =>
      o.status === "rejected" ? [o.reason] : [],
    );
    expect(failures.length).toBeGreaterThan(0);
    expect(failures.length).toBeLessThan(outcomes.length);
    expect(failures.map((error) => isDatabaseUnavailable(error))).toEqual(failures.map(() => true));
    // Another refusal of Prisma's transaction API (its run past `timeout`) stays a defect.
    expect(
      isDatabaseUnavailable({
        code: "P2028",
        message: "Transaction API error: Transaction already closed: the timeout expired.",
      }),
    ).toBe(false);
  });

  it("given only a run limit, keeps the database's wait for a connection", async () => {
    // The first holds its connection 2.5 s, past Prisma's own 2-s wait; on
    // PGlite (one connection, a 60-s wait) the second waits for it.
    const holds = db.transaction(async (tx) => {
      await tx.q.selectFrom("users").select("id").limit(1).execute();
      await sleep(2500);
    });
    await sleep(100);
    const waits = db.transaction((tx) => tx.q.selectFrom("users").select("id").limit(1).execute(), {
      timeout: 10_000,
    });
    const outcomes = await Promise.allSettled([holds, waits]);
    expect(outcomes.map((o) => o.status)).toEqual(["fulfilled", "fulfilled"]);
  });
});

describe("senders all at once to overlapping audiences", () => {
  let server: TestServer;
  let cast: Cast;
  const people = ["desdemona", "iago", "prospero", "hamlet", "othello", "cordelia"];

  beforeAll(async () => {
    server = await startTestServer({ env: { CHAT_RATE_LIMIT: "off" } });
    cast = await loadCast(server, people);
  });

  afterAll(() => server.close());

  it("get every send through, and every queue each event once", async () => {
    const channels = await channelIds(server);
    // Two queues per person, as a phone and a browser.
    const queues = await Promise.all(
      people.flatMap((who) => [1, 2].map(() => listenAs(server, cast.as(who), ["message"]))),
    );
    const sends = people.flatMap((who, i) =>
      Array.from({ length: 8 }, (_, n) =>
        server.call("POST", "/api/v1/messages", {
          ...cast.as(who),
          form:
            n % 2 === 0
              ? {
                  type: "stream",
                  to: String(channels.Denmark),
                  topic: "rush",
                  content: `${who} ${n}`,
                }
              : {
                  type: "direct",
                  to: JSON.stringify([cast.id(people[(i + 1) % people.length] ?? "hamlet")]),
                  content: `${who} ${n}`,
                },
        }),
      ),
    );
    const replies = await Promise.all(sends);
    expect(replies.map((r) => r.status)).toEqual(replies.map(() => 200));
    const sent = replies.map((r) => r.body.id as number);
    for (const [q, poll] of queues.entries()) {
      const who = people[Math.floor(q / 2)] ?? "";
      const events = await poll();
      const ids = events.map((e) => (e.message as { id: number }).id);
      // Each event once, and every message this person got. (Events come in the
      // order their sends committed, which concurrent senders need not keep
      // for message ids: Zulip's contract orders event ids, not message ids.)
      expect(new Set(ids).size).toBe(ids.length);
      ids.sort((x, y) => x - y);
      const theirs = await server.db.prisma.userMessage.findMany({
        where: { user_id: cast.id(who), message_id: { in: sent } },
        select: { message_id: true },
        orderBy: { message_id: "asc" },
      });
      expect([who, ids]).toEqual([who, theirs.map((m) => m.message_id)]);
    }
  });
});
