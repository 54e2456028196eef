import { Client } from "pg";
import { seedDemoRealm } from "../src/db/seed";
import { TEST_DB_KIND, freshDatabase } from "./support/database";

describe("test databases", () => {
  // Two embedded databases started and migrated at once, then a seed: 39-45 s in CI on two
  // busy cores (both test projects run beside it), over jest's 30 s per test.
  it("are separate: what one file writes, another does not see", async () => {
    const [a, b] = await Promise.all([freshDatabase(), freshDatabase()]);
    try {
      await seedDemoRealm(a.prisma);
      expect(await a.prisma.user.count()).toBe(9);
      expect(await b.prisma.user.count()).toBe(0);
      await b.prisma.realm.create({ data: { subdomain: "", name: "Other" } });
      expect((await a.prisma.realm.findFirstOrThrow()).name).toBe("Demo");
      expect(a.kind).toBe(TEST_DB_KIND);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  }, 90_000);

  it("leave nothing behind on PostgreSQL once closed", async () => {
    const db = await freshDatabase();
    const [{ schema } = { schema: "" }] = await db.sql.query<{ schema: string }>(
      "SELECT current_schema() AS schema",
    );
    await db.close();
    if (TEST_DB_KIND === "pglite") {
      expect(schema).toBe("public");
      return;
    }
    const client = new Client({ connectionString: process.env.TEST_DATABASE_URL });
    await client.connect();
    try {
      const { rows } = await client.query("SELECT 1 FROM pg_namespace WHERE nspname = $1", [
        schema,
      ]);
      expect(schema).toMatch(/^t_\d+_[0-9a-f]{8}$/);
      expect(rows).toEqual([]);
    } finally {
      await client.end();
    }
  });
});
