// Every test file runs on the embedded PGlite; with TEST_DATABASE_URL set, the
// whole suite runs a second time on that PostgreSQL server.
const preset = require("../../jest.preset.cjs");

const project = (kind) => ({
  ...preset,
  displayName: kind,
  rootDir: __dirname,
  globals: { __TEST_DB__: kind },
});

module.exports = {
  // Each test file starts its own database; a seeded PGlite takes a few seconds on two cores.
  testTimeout: 30_000,
  projects: [project("pglite"), ...(process.env.TEST_DATABASE_URL ? [project("postgres")] : [])],
};
