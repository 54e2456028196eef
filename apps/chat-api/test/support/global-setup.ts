import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { type ProjectConfig, templatesFolder } from "./templates";

/** Runs test/support/make-templates.ts with `args` in a process of its own. */
const make = (args: readonly string[]) =>
  promisify(execFile)(
    process.execPath,
    [
      "--conditions=@repo/source",
      "--require",
      "@swc-node/register",
      join(__dirname, "make-templates.ts"),
      ...args,
    ],
    { cwd: join(__dirname, "../..") },
  );

/**
 * Runs once before any test file (jest runs one global setup for all projects
 * that name the same file): migrates and seeds the templates every test file
 * copies its database from, PGlite's and, with TEST_DATABASE_URL set,
 * PostgreSQL's, side by side.
 */
export default async function setup(_global: unknown, project: ProjectConfig): Promise<void> {
  const postgres = (process.env.TEST_DATABASE_URL ?? "") !== "";
  await Promise.all([
    make(["pglite", templatesFolder(project.globals)]),
    ...(postgres ? [make(["postgres"])] : []),
  ]);
}
