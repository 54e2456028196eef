/**
 * `Database.transaction`, the one way actions write: Prisma's statements and
 * Kysely's (`tx.q`) run on the same connection, in the same transaction, on
 * either database; all or nothing; and concurrent transactions stay apart.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { sql } from "kysely";
import type { Database } from "../src/db/database";
import { freshDatabase } from "./support/database";

let db: Database;
let realmId: number;

beforeAll(async () => {
  db = await freshDatabase("seeded");
  realmId = (await db.prisma.realm.findFirstOrThrow({ select: { id: true } })).id;
});

afterAll(async () => {
  await db.close();
});

/** Committed linkifier patterns of the probe realm, as another connection sees them. */
async function committed(): Promise<string[]> {
  const rows = await db.q
    .selectFrom("linkifiers")
    .select("pattern")
    .where("realm_id", "=", realmId)
    .orderBy("pattern")
    .execute();
  return rows.map((r) => r.pattern);
}

function linkifier(pattern: string) {
  return { realm_id: realmId, pattern, url_template: "https://example.com/{id}", order: 0 };
}

describe("db.transaction", () => {
  afterEach(async () => {
    await db.prisma.linkifier.deleteMany({ where: { realm_id: realmId } });
  });

  beforeEach(async () => {
    await db.prisma.linkifier.deleteMany({ where: { realm_id: realmId } });
  });

  it("runs Prisma's and Kysely's statements in one transaction: each reads the other's writes", async () => {
    const seen = await db.transaction(async (tx) => {
      await tx.prisma.linkifier.create({ data: linkifier("by-prisma") });
      await tx.q.insertInto("linkifiers").values(linkifier("by-kysely")).execute();
      const byKysely = await tx.q
        .selectFrom("linkifiers")
        .select(sql<number>`count(*)::int`.as("n"))
        .where("realm_id", "=", realmId)
        .executeTakeFirstOrThrow();
      const byPrisma = await tx.prisma.linkifier.count({ where: { realm_id: realmId } });
      return [byKysely.n, byPrisma];
    });
    expect(seen).toEqual([2, 2]);
    expect(await committed()).toEqual(["by-kysely", "by-prisma"]);
  });

  it("rolls back both kinds of statement when the work throws, and the error goes on", async () => {
    const refusal = new Error("refused after two writes");
    await expect(
      db.transaction(async (tx) => {
        await tx.prisma.linkifier.create({ data: linkifier("by-prisma") });
        await tx.q.insertInto("linkifiers").values(linkifier("by-kysely")).execute();
        throw refusal;
      }),
    ).rejects.toBe(refusal);
    expect(await committed()).toEqual([]);
  });

  it("keeps concurrent transactions apart (PostgreSQL: a connection each; PGlite: one after another)", async () => {
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        db
          .transaction(async (tx) => {
            await tx.q
              .insertInto("linkifiers")
              .values(linkifier(`p${i}`))
              .execute();
            const mine = await tx.prisma.linkifier.findMany({
              where: { realm_id: realmId, pattern: { startsWith: "p" } },
              select: { pattern: true },
            });
            if (i % 2 === 1) throw new Error(`refused ${i}`);
            return mine.map((m) => m.pattern);
          })
          .catch((error: unknown) => (error instanceof Error ? error.message : String(error))),
      ),
    );
    // Each transaction sees its own row; what others wrote only once they committed.
    results.forEach((result, i) => {
      if (i % 2 === 1) expect(result).toBe(`refused ${i}`);
      else expect(result).toContain(`p${i}`);
    });
    expect(await committed()).toEqual(["p0", "p2", "p4"]);
  });

  it("finds each transaction's connection when transactions start as others end, and after none was under way", async () => {
    // Between transactions the context that carries the connection is switched off
    // (no hook at every promise); one starting then, or as another ends, still finds its own.
    const pause = (ms: number) => sleep(ms);
    const one = (name: string, holdMs: number) =>
      db.transaction(async (tx) => {
        await tx.prisma.linkifier.create({ data: linkifier(name) });
        await pause(holdMs);
        const seen = await tx.q
          .selectFrom("linkifiers")
          .select("pattern")
          .where("realm_id", "=", realmId)
          .where("pattern", "=", name)
          .execute();
        return seen.map((row) => row.pattern);
      });
    expect(await one("alone-1", 0)).toEqual(["alone-1"]);
    expect(await one("alone-2", 0)).toEqual(["alone-2"]);
    const staggered = await Promise.all(
      Array.from({ length: 8 }, async (_, i) => {
        await pause(i * 3);
        return one(`s${String(i)}`, (i % 3) * 4);
      }),
    );
    expect(staggered).toEqual(Array.from({ length: 8 }, (_, i) => [`s${String(i)}`]));
    expect(await one("alone-3", 0)).toEqual(["alone-3"]);
    expect(await committed()).toHaveLength(11);
  });

  it("gives PostgreSQL's bigint as the table types say (a string) on both databases", async () => {
    const outside = (await sql<{ big: string }>`SELECT 9007199254740993::int8 AS big`.execute(db.q))
      .rows[0]?.big;
    expect(outside).toBe("9007199254740993");
    const constant = await db.transaction(async (tx) => {
      const { rows } = await sql<{ big: string }>`SELECT 9007199254740993::int8 AS big`.execute(
        tx.q,
      );
      return rows[0]?.big;
    });
    expect(constant).toBe("9007199254740993");
  });
});
