/**
 * The development start (`pnpm start`) on the embedded database: its first
 * start makes, migrates and seeds the data directory in a child process, so
 * that the server keeps none of that memory; a later start finds it ready.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { onLogRecord, spawnService } from "./support/service-process";

interface Started {
  messages: string[];
  port: number;
  stop: () => Promise<number | null>;
}

/** Starts the service on `dataDir` and waits until it listens (or exits, which throws). */
async function start(dataDir: string): Promise<Started> {
  const child = spawnService(dataDir);
  const messages: string[] = [];
  const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
  const port = await new Promise<number>((resolve, reject) => {
    void exited.then((code) => reject(new Error(`exited with ${String(code)}`)));
    onLogRecord(child.stdout, (record) => {
      messages.push(String(record.msg));
      if (record.msg === "chat-api listening") resolve(Number(record.port));
    });
  });
  return {
    messages,
    port,
    stop: () => {
      child.kill("SIGTERM");
      return exited;
    },
  };
}

async function hamletsKey(port: number): Promise<string> {
  const answer = await fetch(`http://127.0.0.1:${String(port)}/api/v1/dev_fetch_api_key`, {
    method: "POST",
    body: new URLSearchParams({ username: "hamlet@example.com" }),
  });
  expect(answer.status).toBe(200);
  return ((await answer.json()) as { api_key: string }).api_key;
}

describe("the development start", () => {
  it("prepares a new data directory before it listens, and a later start finds it ready", async () => {
    const dataDir = await mkdtemp(join(tmpdir(), "chat-dev-start-"));
    try {
      const first = await start(dataDir);
      const key = await hamletsKey(first.port);
      expect(await first.stop()).toBe(0);
      expect(first.messages).toContain("applied migrations");
      expect(first.messages).toContain("seeded the demo realm");
      expect(first.messages.indexOf("seeded the demo realm")).toBeLessThan(
        first.messages.indexOf("chat-api listening"),
      );

      const later = await start(dataDir);
      // The same realm, not seeded again (a new seed makes new keys).
      expect(await hamletsKey(later.port)).toBe(key);
      expect(await later.stop()).toBe(0);
      expect(later.messages).not.toContain("applied migrations");
      expect(later.messages).not.toContain("seeded the demo realm");
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });

  it("exits with an error, without listening, when the database cannot be prepared", async () => {
    const dir = await mkdtemp(join(tmpdir(), "chat-dev-start-"));
    const notADirectory = join(dir, "file");
    await writeFile(notADirectory, "");
    try {
      await expect(start(notADirectory)).rejects.toThrow("exited with 1");
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
