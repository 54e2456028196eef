// Every test file runs on the embedded PGlite; with TEST_DATABASE_URL set, the
// whole suite runs a second time on that PostgreSQL server. The run makes the
// migrated and seeded templates once (test/support/global-setup.ts) and every
// test file copies its own database from them (test/support/database.ts).
const { existsSync } = require("node:fs");
const { tmpdir } = require("node:os");
const { join } = require("node:path");
const preset = require("../../jest.preset.cjs");

// This run's PGlite templates and copies: in memory (/dev/shm) where the system
// has it, since a copy of a 41 MB data directory takes 0.08 s there and 0.7 s on
// this machine's disk. Removed by the global teardown.
const templates = join(
  existsSync("/dev/shm") ? "/dev/shm" : tmpdir(),
  `chat-api-test-${process.pid}-${Date.now()}`,
);

// Test files that never open a database run once, in the PGlite project, as
// do the ones about the embedded database's own behaviour and those that
// start the service as a process of its own on a data directory.
const DATABASE_FREE = [
  "dispatch",
  "markdown",
  "polls",
  "render-pool",
  "structure",
  "embedded-statements",
  "memory-budget",
  "embedded-data-dir",
  "log-output",
  "random-key",
  "node-flags",
  "dev-start",
];

// Test files about the PostgreSQL driver itself run in the PostgreSQL project only.
const POSTGRES_ONLY = ["pg-client"];

const project = (kind) => ({
  ...preset,
  displayName: kind,
  testPathIgnorePatterns: [
    ...(preset.testPathIgnorePatterns ?? ["/node_modules/"]),
    `/test/(${(kind === "postgres" ? DATABASE_FREE : POSTGRES_ONLY).join("|")})\\.test\\.ts$`,
  ],
  rootDir: __dirname,
  globals: { __TEST_DB__: kind, __TEST_TEMPLATES__: templates },
  globalSetup: "<rootDir>/test/support/global-setup.ts",
  globalTeardown: "<rootDir>/test/support/global-teardown.ts",
});

module.exports = {
  // A guard against a hang, not a time budget: 1,000 generated requests on
  // PGlite take 15-35 s on two busy cores.
  testTimeout: 120_000,
  // Both cores: test files of both projects run side by side.
  maxWorkers: 2,
  // A worker that kept more than this after a test file is replaced by a fresh
  // one: the module registries of ~90 files in one process took it past its
  // 4 GB heap once (CI, stop 58).
  workerIdleMemoryLimit: "1536MB",
  projects: [project("pglite"), ...(process.env.TEST_DATABASE_URL ? [project("postgres")] : [])],
};
