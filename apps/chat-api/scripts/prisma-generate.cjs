// Runs `prisma generate` on machines that cannot download Prisma's schema
// engine: generate never runs it, but the CLI insists that one exists, so point
// it at an executable that does (node itself) unless the caller chose one.
const { spawnSync } = require("node:child_process");

const env = { ...process.env };
env.PRISMA_SCHEMA_ENGINE_BINARY ??= process.execPath;
env.PRISMA_HIDE_UPDATE_MESSAGE = "1";
env.CHECKPOINT_DISABLE = "1";
const result = spawnSync("prisma", ["generate", "--schema", "prisma/schema.prisma"], {
  stdio: "inherit",
  env,
  shell: process.platform === "win32",
});
process.exit(result.status ?? 1);
