// `pnpm test:stress`: upstream faults, shutdown and a soak, against the built
// service (`dist/`) as a real process. Not part of `pnpm test`; CI runs it after.
const preset = require("../../jest.preset.cjs");

module.exports = {
  ...preset,
  rootDir: __dirname,
  testMatch: ["<rootDir>/stress/**/*.stress.ts"],
  testTimeout: 300_000,
  // Two at a time: the hostile-clients file mostly waits for the service's
  // timeouts, and runs beside the others (each file starts its own service).
  maxWorkers: 2,
};
