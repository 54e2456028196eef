/**
 * Raw SQL transactions (`db.sql.transaction`), which the frequent writes use
 * beside Prisma: all or nothing, on either database, and on PGlite's one
 * connection nothing else (Prisma included) runs inside one.
 */
import type { Database } from "../src/db/database";
import { freshDatabase } from "./support/database";

let db: Database;

beforeAll(async () => {
  db = await freshDatabase();
  await db.sql.exec("CREATE TABLE tx_probe (id int PRIMARY KEY, note text NOT NULL)");
});

afterAll(async () => {
  await db.close();
});

const notes = async () =>
  (await db.sql.query<{ note: string }>("SELECT note FROM tx_probe ORDER BY id")).map(
    (r) => r.note,
  );

describe("db.sql.transaction", () => {
  it("commits every statement of work that resolves, and returns its value", async () => {
    const value = await db.sql.transaction(async (tx) => {
      await tx.query("INSERT INTO tx_probe VALUES (1, 'one')");
      await tx.query("INSERT INTO tx_probe VALUES (2, 'two')");
      return (await tx.query<{ n: number }>("SELECT count(*)::int AS n FROM tx_probe"))[0]?.n;
    });
    expect(value).toBe(2);
    expect(await notes()).toEqual(["one", "two"]);
  });

  it("rolls back every statement when work throws, and the error goes on", async () => {
    const refusal = new Error("refused after a write");
    await expect(
      db.sql.transaction(async (tx) => {
        await tx.query("UPDATE tx_probe SET note = 'changed'");
        await tx.query("INSERT INTO tx_probe VALUES (3, 'three')");
        throw refusal;
      }),
    ).rejects.toBe(refusal);
    expect(await notes()).toEqual(["one", "two"]);
  });

  it("rolls back when a statement fails, and the connection serves the next caller", async () => {
    await expect(
      db.sql.transaction(async (tx) => {
        await tx.query("INSERT INTO tx_probe VALUES (4, 'four')");
        await tx.query("INSERT INTO tx_probe VALUES (1, 'a duplicate key')");
      }),
    ).rejects.toThrow(/duplicate key/);
    expect(await notes()).toEqual(["one", "two"]);
    const [row] = await db.sql.query<{ status: string }>("SELECT 'ok' AS status");
    expect(row?.status).toBe("ok");
  });

  it("does not let a Prisma query in between see uncommitted rows", async () => {
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    let inserted: () => void = () => undefined;
    const insertDone = new Promise<void>((resolve) => (inserted = resolve));
    const writing = db.sql.transaction(async (tx) => {
      await tx.query("INSERT INTO tx_probe VALUES (5, 'five')");
      inserted();
      await held;
    });
    await insertDone;
    // Prisma's promises run once awaited (and again on each later await): await one `then` only.
    const reading = db.prisma.$queryRaw<{ n: number }[]>`
      SELECT count(*)::int AS n FROM tx_probe WHERE id = 5`.then(([r]) => r?.n);
    if (db.kind === "postgres") {
      // A pool of ten: the reader takes another connection and answers while the writer
      // still holds its transaction open, from before the commit.
      expect(await reading).toBe(0);
      release();
      await writing;
    } else {
      // PGlite's one connection: the reader waits for the commit, then sees the row.
      const early = await Promise.race([
        reading,
        new Promise((resolve) => setTimeout(() => resolve("waiting"), 200)),
      ]);
      expect(early).toBe("waiting");
      release();
      await writing;
      expect(await reading).toBe(1);
    }
  });
});
