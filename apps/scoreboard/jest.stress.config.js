// `pnpm test:stress`: upstream faults, shutdown and a soak, against the built
// service (`dist/`) as a real process. Not part of `pnpm test`; CI runs it after.
const preset = require("../../jest.preset.cjs");

module.exports = {
  ...preset,
  rootDir: __dirname,
  testMatch: ["<rootDir>/stress/**/*.stress.ts"],
  testTimeout: 300_000,
  // One at a time: each drives the machine hard on purpose.
  maxWorkers: 1,
};
