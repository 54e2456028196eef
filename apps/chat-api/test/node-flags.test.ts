/**
 * chat-api's Node flags (`src/node-flags.ts`): what `pnpm start` and the
 * image run with, and the warning of a process started without them.
 */
import type { ChildProcess } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { NODE_FLAGS, PROCESS_ENV, START_COMMAND, missingProcessEnv } from "../src/node-flags";
import { onLogRecord, spawnService } from "./support/service-process";

const ROOT = join(__dirname, "..");

/** Resolves with the first JSON log line of `child` whose msg matches `pattern`. */
function logLine(child: ChildProcess, pattern: RegExp): Promise<Record<string, unknown>> {
  if (child.stdout === null) throw new Error("no stdout");
  const { stdout } = child;
  return new Promise((resolve, reject) => {
    child.once("exit", (code) => reject(new Error(`exited with ${String(code)}`)));
    onLogRecord(stdout, (record) => {
      if (typeof record.msg === "string" && pattern.test(record.msg)) resolve(record);
    });
  });
}

describe("chat-api's Node flags", () => {
  it("are what pnpm start and the image's ENTRYPOINT run with", async () => {
    const { scripts } = JSON.parse(await readFile(join(ROOT, "package.json"), "utf8")) as {
      scripts: Record<string, string>;
    };
    expect(scripts.start).toBe(START_COMMAND);
    expect(START_COMMAND).toBe(
      ["MALLOC_ARENA_MAX=2", "node", ...NODE_FLAGS, "dist/index.js"].join(" "),
    );
    const dockerfile = await readFile(join(ROOT, "Dockerfile"), "utf8");
    const entrypoint = /^ENTRYPOINT (.*)$/m.exec(dockerfile)?.[1];
    expect(JSON.parse(entrypoint ?? "null")).toEqual(["node", ...NODE_FLAGS, "dist/index.js"]);
    // The runtime stage's environment (its last ENV line) sets each of PROCESS_ENV.
    const env = [...dockerfile.matchAll(/^ENV (.*)$/gm)].at(-1)?.[1] ?? "";
    const set = Object.fromEntries(
      env.split(/\s+/).map((pair): [string, string] => {
        const [name = "", value = ""] = pair.split("=", 2);
        return [name, value];
      }),
    );
    expect(set).toMatchObject(PROCESS_ENV);
  });

  it("tells which of its environment's settings are missing", () => {
    expect(missingProcessEnv({ MALLOC_ARENA_MAX: "2" })).toEqual([]);
    expect(missingProcessEnv({})).toEqual(["MALLOC_ARENA_MAX"]);
    expect(missingProcessEnv({ MALLOC_ARENA_MAX: "8" })).toEqual(["MALLOC_ARENA_MAX"]);
  });

  it("are named in a warning when the process was started without them", async () => {
    const dataDir = await mkdtemp(join(tmpdir(), "chat-flags-"));
    const child = spawnService(dataDir, { MALLOC_ARENA_MAX: "" });
    try {
      const [warning, unset] = await Promise.all([
        logLine(child, /started without the service's Node flags/),
        logLine(child, /started without the service's environment/),
      ]);
      expect(warning).toMatchObject({ level: 40, missing: [...NODE_FLAGS] });
      expect(warning.msg).toContain(`node ${NODE_FLAGS.join(" ")} dist/index.js`);
      expect(unset).toMatchObject({ level: 40, missing: ["MALLOC_ARENA_MAX"] });
      expect(unset.msg).toContain(START_COMMAND);
    } finally {
      child.kill("SIGKILL");
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
