import { mkdtemp, mkdir, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MigrationDriftError, migrate, readMigrations } from "../src/db/migrate";
import { freshDatabase, type TestDatabase } from "./support/database";

let db: TestDatabase;

beforeAll(async () => {
  db = await freshDatabase();
});

afterAll(() => db.close());

describe("the migration runner", () => {
  it("records every migration the way Prisma Migrate does", async () => {
    const files = await readMigrations();
    const rows = await db.sql.query<{
      migration_name: string;
      checksum: string;
      applied_steps_count: number;
      finished_at: Date | null;
    }>(
      `SELECT migration_name, checksum, applied_steps_count, finished_at FROM "_prisma_migrations" ORDER BY migration_name`,
    );
    expect(rows.map((r) => [r.migration_name, r.checksum, r.applied_steps_count])).toEqual(
      files.map((f) => [f.name, f.checksum, 1]),
    );
    expect(rows.every((r) => r.finished_at instanceof Date)).toBe(true);
    expect(files[0]?.checksum).toMatch(/^[0-9a-f]{64}$/);
  });

  it("applies nothing the second time", async () => {
    expect(await migrate(db.sql)).toEqual([]);
  });

  it("runs concurrent starts one after the other, each migration once", async () => {
    const dir = await mkdtemp(join(tmpdir(), "migrations-"));
    await mkdir(join(dir, "20990101000000_extra"));
    await writeFile(
      join(dir, "20990101000000_extra", "migration.sql"),
      "CREATE TABLE extra_once (id int);",
    );
    // On PostgreSQL, separate pools stand for replicas and meet at the advisory lock.
    const replicas = await Promise.all([db.replica?.(), db.replica?.()]);
    const runners = [db.sql, ...replicas.map((r) => r?.sql ?? db.sql)];
    try {
      const results = await Promise.all(runners.map((sql) => migrate(sql, dir)));
      expect(results.flat()).toEqual(["20990101000000_extra"]);
    } finally {
      await Promise.all(replicas.flatMap((r) => (r === undefined ? [] : [r.close()])));
    }
  });

  it("refuses to run when an applied migration was edited", async () => {
    const dir = await mkdtemp(join(tmpdir(), "migrations-"));
    await mkdir(join(dir, "20990101000000_extra"));
    await writeFile(
      join(dir, "20990101000000_extra", "migration.sql"),
      "CREATE TABLE extra_once (id bigint);",
    );
    await expect(migrate(db.sql, dir)).rejects.toThrow(MigrationDriftError);
  });

  it("rolls a failing migration back whole and records nothing", async () => {
    const dir = await mkdtemp(join(tmpdir(), "migrations-"));
    await mkdir(join(dir, "20990102000000_broken"));
    await writeFile(
      join(dir, "20990102000000_broken", "migration.sql"),
      "CREATE TABLE half_done (id int);\nSELECT no_such_function();",
    );
    await expect(migrate(db.sql, dir)).rejects.toThrow(/no_such_function/);
    const tables = await db.sql.query(
      `SELECT 1 FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = 'half_done'`,
    );
    expect(tables).toEqual([]);
    const recorded = await db.sql.query(
      `SELECT 1 FROM "_prisma_migrations" WHERE migration_name = '20990102000000_broken'`,
    );
    expect(recorded).toEqual([]);
  });
});
