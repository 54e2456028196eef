/**
 * Makes a run's templates, one process per database kind, so that jest's global
 * setup makes PGlite's and PostgreSQL's on both cores at once and the jest
 * process never holds a PGlite instance:
 *
 *   node --conditions=@repo/source --require @swc-node/register \
 *     test/support/make-templates.ts pglite FOLDER | postgres
 */
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { createDatabase, type Database } from "../../src/db/database";
import { migrate } from "../../src/db/migrate";
import { seedDemoRealm } from "../../src/cli/demo-data";
import {
  TEST_PGLITE_SHARED_BUFFERS,
  type TemplateState,
  copyFolder,
  databaseUrl,
  dropRunDatabases,
  templateName,
  withClient,
} from "./templates";

/** Runs `work` on `db`, then closes it. */
async function using(db: Database, work: (db: Database) => Promise<void>): Promise<void> {
  try {
    await work(db);
  } finally {
    await db.close();
  }
}

const migrated = async (db: Database) => {
  await migrate(db.sql);
};
const seed = (db: Database) => seedDemoRealm(db);

/** Makes the PGlite templates in `root`: `migrated`, then `seeded`, a copy of it with the demo realm. */
async function makePgliteTemplates(root: string): Promise<void> {
  await mkdir(root, { recursive: true });
  const open = (state: TemplateState) =>
    createDatabase({
      kind: "pglite",
      dataDir: join(root, state),
      sharedBuffers: TEST_PGLITE_SHARED_BUFFERS,
    });
  await using(await open("migrated"), migrated);
  await copyFolder(join(root, "migrated"), join(root, "seeded"));
  await using(await open("seeded"), seed);
}

/** Makes the PostgreSQL templates beside TEST_DATABASE_URL's database: `migrated`, then `seeded`. */
async function makePostgresTemplates(): Promise<void> {
  const base = process.env.TEST_DATABASE_URL;
  if (base === undefined || base === "")
    throw new Error("the postgres project needs TEST_DATABASE_URL");
  await dropRunDatabases(base);
  const open = (state: TemplateState) =>
    createDatabase({
      kind: "postgres",
      url: databaseUrl(base, templateName(base, state)),
      poolSize: 2,
    });
  await withClient(base, (c) => c.query(`CREATE DATABASE "${templateName(base, "migrated")}"`));
  await using(await open("migrated"), migrated);
  await withClient(base, (c) =>
    c.query(
      `CREATE DATABASE "${templateName(base, "seeded")}" TEMPLATE "${templateName(base, "migrated")}"`,
    ),
  );
  await using(await open("seeded"), seed);
}

const [kind, folder] = process.argv.slice(2);
const made =
  kind === "pglite" && folder !== undefined
    ? makePgliteTemplates(folder)
    : kind === "postgres"
      ? makePostgresTemplates()
      : Promise.reject(new Error("usage: make-templates.ts pglite FOLDER | postgres"));
made.catch((error: unknown) => {
  process.stderr.write(`${String(error instanceof Error ? error.stack : error)}\n`);
  process.exit(1);
});
