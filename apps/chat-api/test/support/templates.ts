/**
 * The names and clean-up of a test run's database templates (made by
 * make-templates.ts, copied by database.ts). No import of the service's code:
 * jest's global setup and teardown load this file as it is.
 */
import { createHash } from "node:crypto";
import { execFile } from "node:child_process";
import { rm } from "node:fs/promises";
import { promisify } from "node:util";
import { Client } from "pg";

/**
 * PGlite's shared buffers in tests: every test file opens its own PGlite, and
 * at PostgreSQL's default (128MB) clearing them takes most of the 1-4 s an open
 * costs; the test databases hold a few MB.
 */
export const TEST_PGLITE_SHARED_BUFFERS = "16MB";

/** The states a test database can start in. */
export type TemplateState = "migrated" | "seeded";

/** Copies a data directory (the system's `cp`: Node's fs.cp takes 15 times as long for its ~1,200 files). */
export async function copyFolder(from: string, to: string): Promise<void> {
  await promisify(execFile)("cp", ["-R", from, to]);
}

/** What jest.config.js sets for each project: the database kind and this run's PGlite template folder. */
export interface TestGlobals {
  __TEST_DB__?: "pglite" | "postgres";
  __TEST_TEMPLATES__?: string;
}

/** What jest passes a project's global setup and teardown (the part they read). */
export interface ProjectConfig {
  globals: TestGlobals;
}

/** The folder of this run's PGlite templates and copies. */
export function templatesFolder(globals: TestGlobals): string {
  const folder = globals.__TEST_TEMPLATES__;
  if (folder === undefined || folder === "") {
    throw new Error("__TEST_TEMPLATES__ is unset: run the tests through jest.config.js");
  }
  return folder;
}

/**
 * The name of a database this run makes beside TEST_DATABASE_URL's: short
 * (PostgreSQL keeps 63 bytes of a name) and unique to that database, so runs
 * against different databases of one server never meet.
 */
export function templateName(baseUrl: string, suffix: string): string {
  const base = new URL(baseUrl).pathname.slice(1);
  return `ct_${createHash("sha256").update(base).digest("hex").slice(0, 8)}_${suffix}`;
}

/** `baseUrl` with another database name. */
export function databaseUrl(baseUrl: string, name: string): string {
  const url = new URL(baseUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

/** Runs `work` on a connection of its own (CREATE and DROP DATABASE cannot run inside a pool's transaction). */
export async function withClient<T>(url: string, work: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** Drops every database an earlier run against `baseUrl` left (a killed run cannot clean up). */
export async function dropRunDatabases(baseUrl: string): Promise<void> {
  await withClient(baseUrl, async (client) => {
    const prefix = templateName(baseUrl, "");
    const { rows } = await client.query<{ datname: string }>(
      "SELECT datname FROM pg_database WHERE starts_with(datname, $1)",
      [prefix],
    );
    for (const { datname } of rows) {
      await client.query(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`);
    }
  });
}

/** Removes what make-templates.ts made. */
export async function removeTemplates(project: ProjectConfig): Promise<void> {
  await rm(templatesFolder(project.globals), { recursive: true, force: true });
  const base = process.env.TEST_DATABASE_URL;
  if (base !== undefined && base !== "") await dropRunDatabases(base);
}
