import { access } from "node:fs/promises";
import { Client } from "pg";
import { TEST_DB_KIND, freshDatabase } from "./support/database";

describe("test databases", () => {
  it("are separate copies of the run's templates: what one file writes, another does not see", async () => {
    const [a, b, empty] = await Promise.all([
      freshDatabase("seeded"),
      freshDatabase("seeded"),
      freshDatabase("migrated"),
    ]);
    try {
      expect(a.kind).toBe(TEST_DB_KIND);
      expect(await a.prisma.user.count()).toBe(9);
      expect(await empty.prisma.user.count()).toBe(0);
      await a.prisma.realm.update({ where: { subdomain: "" }, data: { name: "Changed" } });
      await a.prisma.user.deleteMany({ where: { email: "hamlet-bot@example.com" } });
      expect((await b.prisma.realm.findUniqueOrThrow({ where: { subdomain: "" } })).name).toBe(
        "Demo",
      );
      expect(await b.prisma.user.count()).toBe(9);
      const again = await freshDatabase("seeded");
      try {
        expect(
          (await again.prisma.realm.findUniqueOrThrow({ where: { subdomain: "" } })).name,
        ).toBe("Demo");
      } finally {
        await again.close();
      }
    } finally {
      await Promise.all([a.close(), b.close(), empty.close()]);
    }
  });

  it("leave nothing behind once closed", async () => {
    const db = await freshDatabase();
    await db.close();
    if (TEST_DB_KIND === "pglite") {
      expect(db.dataDir).toEqual(expect.any(String));
      await expect(access(db.dataDir ?? "")).rejects.toThrow(/ENOENT/);
      return;
    }
    const name = new URL(db.url ?? "").pathname.slice(1);
    expect(name).toMatch(/^ct_[0-9a-f]{8}_t_\d+_[0-9a-f]{8}$/);
    const client = new Client({ connectionString: process.env.TEST_DATABASE_URL });
    await client.connect();
    try {
      const { rows } = await client.query("SELECT 1 FROM pg_database WHERE datname = $1", [name]);
      expect(rows).toEqual([]);
    } finally {
      await client.end();
    }
  });
});
