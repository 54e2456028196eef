import { randomBytes } from "node:crypto";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { createDatabase, type Database } from "../../src/db/database";
import {
  TEST_PGLITE_SHARED_BUFFERS,
  type TemplateState,
  type TestGlobals,
  copyFolder,
  databaseUrl,
  templateName,
  templatesFolder,
  withClient,
} from "./templates";

const globals = globalThis as TestGlobals;

/** A name part no other copy of this run has: the worker's pid and 4 random bytes. */
const uniqueSuffix = (): string => `${process.pid}_${randomBytes(4).toString("hex")}`;

/** Which database this jest project runs on (see jest.config.js). */
export const TEST_DB_KIND: "pglite" | "postgres" = globals.__TEST_DB__ ?? "pglite";

/** A test file's database; `replica` opens a second connection pool to the same data (PostgreSQL only). */
export interface TestDatabase extends Database {
  /** PostgreSQL: the URL of this database; PGlite: undefined. */
  readonly url?: string;
  /** PGlite: the data directory of this database; PostgreSQL: undefined. */
  readonly dataDir?: string;
  replica?: () => Promise<Database>;
}

/**
 * A copy of a PGlite template's data directory, for a process that opens it
 * itself (the admin CLI); its caller removes it. It lives in the run's template
 * folder, which the run removes at its end.
 */
export async function freshDataDir(state: TemplateState = "migrated"): Promise<string> {
  const root = templatesFolder(globals);
  const dataDir = join(root, `db_${uniqueSuffix()}`);
  await copyFolder(join(root, state), dataDir);
  return dataDir;
}

/**
 * A database of its own for one test file, copied from a template the run made
 * once (test/support/global-setup.ts): `migrated` has every migration applied,
 * `seeded` also the demo realm. PGlite: a copy of the template's data directory,
 * removed by `close`; PostgreSQL: `CREATE DATABASE ... TEMPLATE` on the server of
 * TEST_DATABASE_URL, dropped by `close`.
 */
export async function freshDatabase(state: TemplateState = "migrated"): Promise<TestDatabase> {
  if (TEST_DB_KIND === "pglite") {
    const dataDir = await freshDataDir(state);
    const db = await createDatabase({
      kind: "pglite",
      dataDir,
      sharedBuffers: TEST_PGLITE_SHARED_BUFFERS,
    });
    let closing: Promise<void> | undefined;
    return {
      ...db,
      dataDir,
      close() {
        closing ??= db.close().then(() => rm(dataDir, { recursive: true, force: true }));
        return closing;
      },
    };
  }
  const base = process.env.TEST_DATABASE_URL ?? "";
  const name = `${templateName(base, "t")}_${uniqueSuffix()}`;
  const template = templateName(base, state);
  await withClient(base, (c) => c.query(`CREATE DATABASE "${name}" TEMPLATE "${template}"`));
  const url = databaseUrl(base, name);
  const db = await createDatabase({ kind: "postgres", url, poolSize: 4 });
  let closing: Promise<void> | undefined;
  return {
    ...db,
    url,
    replica: () => createDatabase({ kind: "postgres", url, poolSize: 4 }),
    close() {
      closing ??= db
        .close()
        .then(() =>
          withClient(base, (c) => c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)),
        )
        .then(() => undefined);
      return closing;
    },
  };
}
