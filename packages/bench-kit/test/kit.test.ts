import { setTimeout as sleep } from "node:timers/promises";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  autocannon,
  autocannonArgs,
  autocannonVersion,
  freePort,
  heapAfterGc,
  memoryAfterGc,
  quantile,
  summarize,
  table,
  until,
  waitForPort,
  windowed,
  writeSection,
} from "../src";

describe("quantile and summarize", () => {
  it("takes the nearest rank", () => {
    const values = Array.from({ length: 100 }, (_, i) => i + 1);
    expect(quantile(values, 0.5)).toBe(50);
    expect(quantile(values, 0.99)).toBe(99);
    expect(quantile(values, 1)).toBe(100);
    expect(quantile([], 0.5)).toBeNaN();
  });

  it("gives the median and the spread of rounds", () => {
    expect(summarize([110, 90, 100])).toEqual({ median: 100, min: 90, max: 110, spread: 0.2 });
  });
});

describe("windowed", () => {
  it("keeps only the samples that started in the window", () => {
    const samples = [
      { startMs: 0, latencyMs: 100 },
      { startMs: 10, latencyMs: 1 },
      { startMs: 11, latencyMs: 3 },
      { startMs: 20, latencyMs: 100 },
    ];
    expect(windowed(samples, 10, 20)).toEqual({ count: 2, p50Ms: 1, p99Ms: 3 });
  });
});

describe("writeSection", () => {
  it("adds a section, then replaces only that section", () => {
    const file = join(mkdtempSync(join(tmpdir(), "kit-")), "b.md");
    writeFileSync(file, "# Benchmarks\n\nintro\n");
    writeSection(file, "a", "first");
    writeSection(file, "b", "other");
    writeSection(file, "a", "second");
    const text = readFileSync(file, "utf8");
    expect(text).toBe(
      "# Benchmarks\n\nintro\n\n<!-- a:begin -->\n\nsecond\n\n<!-- a:end -->\n\n<!-- b:begin -->\n\nother\n\n<!-- b:end -->\n",
    );
  });

  it("renders a table", () => {
    expect(table(["x", "y"], [["1", "2"]])).toBe("| x | y |\n| --- | --- |\n| 1 | 2 |");
  });
});

describe("autocannon", () => {
  it("builds the command line: method, rate, headers split at their first '=', body, URL last", () => {
    expect(
      autocannonArgs({
        url: "http://127.0.0.1:1/x",
        method: "PATCH",
        headers: { authorization: "Basic YTpi==", "content-type": "text/plain" },
        body: "a=b",
        connections: 4,
        seconds: 2,
        rate: 50,
      }),
    ).toEqual([
      "--json",
      "-c",
      "4",
      "-d",
      "2",
      "-m",
      "PATCH",
      "-R",
      "50",
      "-H",
      "authorization=Basic YTpi==",
      "-H",
      "content-type=text/plain",
      "-b",
      "a=b",
      "http://127.0.0.1:1/x",
    ]);
  });

  it("measures a local server: every request answered, none failed", async () => {
    const server = http.createServer((_req, res) => res.end("ok"));
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    const { port } = server.address() as AddressInfo;
    try {
      const result = await autocannon({
        url: `http://127.0.0.1:${port}/`,
        connections: 2,
        seconds: 1,
        rate: 100,
      });
      // How many fit in the second depends on the machine's load (a busy CI
      // machine sent 127 at 100/s); the rate's flag is checked by autocannonArgs' test.
      expect(result.failures).toBe(0);
      expect(result.requests).toBeGreaterThan(0);
      expect(result.p99Ms).toBeGreaterThanOrEqual(result.p50Ms);
      expect(autocannonVersion()).toMatch(/^\d+\.\d+\.\d+$/);
    } finally {
      server.close();
    }
  });
});

describe("heapAfterGc", () => {
  it("reads a process's heap after a full collection, through its inspector", async () => {
    const port = await freePort();
    // A process that keeps 20 MiB and lets 50 MiB become garbage.
    const child = spawn(
      process.execPath,
      [
        `--inspect=127.0.0.1:${port}`,
        "-e",
        "globalThis.kept = Array.from({ length: 20 }, () => new Array(131072).fill(1.5)); " +
          "for (let i = 0; i < 50; i++) new Array(131072).fill(2.5); setInterval(() => {}, 1000);",
      ],
      { stdio: "ignore" },
    );
    try {
      await waitForPort(port);
      await sleep(300);
      const bytes = await heapAfterGc(port);
      // 20 arrays of 131,072 doubles: 20 MiB kept, plus the runtime's own few MiB.
      expect(bytes).toBeGreaterThan(20 * 2 ** 20);
      expect(bytes).toBeLessThan(40 * 2 ** 20);
      // The resident set holds that heap, and Node's own few tens of MiB.
      const memory = await memoryAfterGc(port);
      expect(memory.rss).toBeGreaterThan(memory.heapUsed);
      expect(memory.rss).toBeLessThan(200 * 2 ** 20);
    } finally {
      child.kill("SIGKILL");
    }
  });
});

describe("until", () => {
  it("resolves once the check holds, counting a check that throws as not yet", async () => {
    let asked = 0;
    await until(
      () => {
        asked += 1;
        if (asked === 1) throw new Error("not up yet");
        return Promise.resolve(asked === 3);
      },
      5_000,
      "the third look",
      1,
    );
    expect(asked).toBe(3);
  });

  it("rejects after its time, naming what it waited for", async () => {
    let asked = 0;
    const started = Date.now();
    await expect(
      until(
        () => {
          asked += 1;
          return false;
        },
        50,
        "a check that never holds",
        10,
      ),
    ).rejects.toThrow("timed out after 50 ms waiting for a check that never holds");
    expect(Date.now() - started).toBeGreaterThanOrEqual(50);
    expect(asked).toBeGreaterThan(1);
  });
});
