module.exports = {
  ...require("../../jest.preset.cjs"),
  // A Vite build, a scoreboard and Chromium start per test file.
  testTimeout: 60_000,
};
