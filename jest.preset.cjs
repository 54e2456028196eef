// Shared jest settings: TypeScript through @swc/jest in CommonJS mode, and
// workspace packages mapped to their sources so tests never need a build.
module.exports = {
  testEnvironment: "node",
  // A guard against a hang, not a time budget: suites run side by side and may
  // share both cores. Speed is measured by pnpm bench, never by a test.
  testTimeout: 60_000,
  testMatch: ["<rootDir>/test/**/*.test.ts"],
  transform: {
    "^.+\\.ts$": [
      "@swc/jest",
      {
        jsc: { parser: { syntax: "typescript" }, target: "es2023" },
        // Dynamic import() stays native, for ES-module-only packages (needs --experimental-vm-modules).
        module: { type: "commonjs", ignoreDynamic: true },
      },
    ],
  },
  // Generated code (Prisma's) imports its TypeScript siblings as `./x.js`.
  moduleNameMapper: { "^(\\.{1,2}/.*)\\.js$": "$1" },
  // Workspace packages export their sources under this condition.
  testEnvironmentOptions: {
    customExportConditions: ["@repo/source", "node", "require", "default"],
  },
};
