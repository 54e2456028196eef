/**
 * chat-api's log lines on standard output: buffered (`CHAT_LOG_BUFFER_BYTES`,
 * pino's asynchronous logging), yet a quiet server's lines come out within
 * the flush interval, and the last ones at exit.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { until } from "@repo/bench-kit";
import { loadConfig } from "../src/lib/config";
import { onLogRecord, spawnService } from "./support/service-process";

describe("chat-api's log output", () => {
  it("writes a quiet server's lines within the flush interval, and its last ones at exit", async () => {
    const dataDir = await mkdtemp(join(tmpdir(), "chat-log-"));
    const child = spawnService(dataDir);
    const records: Record<string, unknown>[] = [];
    onLogRecord(child.stdout, (record) => records.push(record));
    const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
    const logged = (msg: string) => records.find((r) => r.msg === msg);
    try {
      // Far less than the 4 KiB buffer: out by the flush alone.
      await until(
        () => logged("chat-api listening") !== undefined,
        60_000,
        "the listening line",
        20,
      );
      const port = logged("chat-api listening")?.port as number;
      const answer = await fetch(`http://127.0.0.1:${String(port)}/api/v1/server_settings`);
      expect(answer.status).toBe(200);
      const asked = Date.now();
      await until(() => logged("request completed") !== undefined, 5_000, "the access line", 20);
      // Within a few flush intervals (100 ms), however busy the machine running the tests.
      expect(Date.now() - asked).toBeLessThan(5_000);
      expect(logged("request completed")).toMatchObject({
        req: { method: "GET", path: "/api/v1/server_settings" },
        res: { statusCode: 200 },
      });
      child.kill("SIGTERM");
      expect(await exited).toBe(0);
      // Logged just before exit, and written by it.
      expect(records.map((r) => r.msg).slice(-2)).toEqual(["draining", "stopped"]);
    } finally {
      if (child.exitCode === null) child.kill("SIGKILL");
      await rm(dataDir, { recursive: true, force: true });
    }
  });

  it("takes a buffer size from 0 (a write per line) to the largest pino's destination takes, and refuses others", async () => {
    expect(loadConfig({}).CHAT_LOG_BUFFER_BYTES).toBe(4096);
    expect(loadConfig({ CHAT_LOG_BUFFER_BYTES: "0" }).CHAT_LOG_BUFFER_BYTES).toBe(0);
    const largest = loadConfig({ CHAT_LOG_BUFFER_BYTES: "16383" }).CHAT_LOG_BUFFER_BYTES;
    // The service's destination, as src/index.ts makes it, takes the largest size.
    const destination = pino.destination({ dest: "/dev/null", minLength: largest, sync: false });
    await new Promise((resolve) => destination.once("ready", resolve));
    destination.end();
    for (const bad of ["-1", "16384", "1048576", "4k"])
      expect(() => loadConfig({ CHAT_LOG_BUFFER_BYTES: bad })).toThrow(/CHAT_LOG_BUFFER_BYTES/);
  });
});
