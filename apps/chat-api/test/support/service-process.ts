/**
 * chat-api started as a process of its own from its sources (`src/index.ts`,
 * development mode on a PGlite data directory, ports picked by the system),
 * for the tests of what only a whole process shows: its Node flags, its log
 * output. Its standard output is a pipe the test reads.
 */
import { type ChildProcessByStdio, spawn } from "node:child_process";
import { join } from "node:path";
import { createInterface } from "node:readline";
import type { Readable } from "node:stream";

/** Starts chat-api on `dataDir`, with `env` added to its environment. */
export function spawnService(
  dataDir: string,
  env: Record<string, string> = {},
): ChildProcessByStdio<null, Readable, null> {
  return spawn(
    process.execPath,
    ["--conditions=@repo/source", "--require", "@swc-node/register", "src/index.ts"],
    {
      cwd: join(__dirname, "../.."),
      env: {
        ...process.env,
        NODE_ENV: "development",
        DATABASE_URL: "",
        CHAT_DATA_DIR: dataDir,
        CHAT_HOST: "127.0.0.1",
        PORT: "0",
        CHAT_METRICS_PORT: "0",
        CHAT_LOG_LEVEL: "info",
        ...env,
      },
      stdio: ["ignore", "pipe", "inherit"],
    },
  );
}

/** Calls `listener` with each JSON log line (a pino record) `stdout` writes; other lines are skipped. */
export function onLogRecord(
  stdout: Readable,
  listener: (record: Record<string, unknown>) => void,
): void {
  createInterface({ input: stdout }).on("line", (line) => {
    if (line.startsWith("{")) listener(JSON.parse(line) as Record<string, unknown>);
  });
}
