import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import net from "node:net";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { readFileSync } from "node:fs";
import { loadConfig } from "../src/config";
import { NODE_FLAGS } from "../src/node-flags";
import { scoreboardClient, transportNamed } from "./helpers";

jest.setTimeout(60_000);

const ROOT = join(__dirname, "..");

/** Runs src/index.ts as the service would run (with its Node flags unless told otherwise), compiled on load. */
function startProcess(env: Record<string, string>, nodeFlags = NODE_FLAGS): ChildProcess {
  return spawn(
    process.execPath,
    [...nodeFlags, "--conditions=@repo/source", "--require", "@swc-node/register", "src/index.ts"],
    {
      cwd: ROOT,
      env: { ...process.env, SCOREBOARD_LOG_LEVEL: "info", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
}

async function freePort(): Promise<number> {
  const server = net.createServer().listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Resolves with the first JSON log line whose msg matches. */
function waitForLog(child: ChildProcess, pattern: RegExp): Promise<Record<string, unknown>> {
  if (child.stdout === null) throw new Error("no stdout");
  const lines = createInterface({ input: child.stdout });
  return new Promise((resolve) => {
    lines.on("line", (line) => {
      const record = JSON.parse(line) as Record<string, unknown>;
      if (typeof record.msg === "string" && pattern.test(record.msg)) resolve(record);
    });
  });
}

describe("the scoreboard process", () => {
  it("serves the bundled demo board out of the box, exports metrics and drains on SIGTERM", async () => {
    const [port, metricsPort] = [await freePort(), await freePort()];
    const child = startProcess({
      SCOREBOARD_PORT: String(port),
      SCOREBOARD_METRICS_PORT: String(metricsPort),
      SCOREBOARD_HOST: "127.0.0.1",
    });
    const exited = once(child, "exit");
    try {
      await waitForLog(child, /scoreboard refreshed/);
      const client = scoreboardClient(transportNamed(`http://127.0.0.1:${port}`, "gRPC (h2c)"));
      const page = await client.listScoreboard({ offset: 0, limit: 2 });
      expect(page.total).toBe(10_000);
      expect(page.entries.map((e) => e.rank)).toEqual([1, 2]);
      expect(page.entries[0]?.score).toBe(1_000_000);
      const again = await client.getByUsername({
        username: page.entries[1]?.username.toUpperCase() ?? "",
      });
      expect(again.rank).toBe(2);

      const metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
      expect(metrics).toMatch(/^scoreboard_snapshot_entries 10000$/m);
      expect(metrics).toMatch(
        /^scoreboard_requests_total\{method="ListScoreboard",code="OK"\} 1$/m,
      );
      expect(metrics).toMatch(/^scoreboard_requests_total\{method="GetByUsername",code="OK"\} 1$/m);
      // Latencies are counted per method and published when scraped: one call each, cumulative buckets.
      const name = "scoreboard_request_duration_seconds";
      expect(metrics).toMatch(new RegExp(`^# TYPE ${name} histogram$`, "m"));
      for (const method of ["ListScoreboard", "GetByUsername"]) {
        expect(metrics).toMatch(new RegExp(`^${name}_count\\{method="${method}"\\} 1$`, "m"));
        expect(metrics).toMatch(
          new RegExp(`^${name}_bucket\\{le="\\+Inf",method="${method}"\\} 1$`, "m"),
        );
        expect(metrics).toMatch(
          new RegExp(`^${name}_bucket\\{le="1",method="${method}"\\} 1$`, "m"),
        );
        const sum = new RegExp(`^${name}_sum\\{method="${method}"\\} (\\S+)$`, "m").exec(metrics);
        expect(Number(sum?.[1])).toBeGreaterThan(0);
        expect(Number(sum?.[1])).toBeLessThan(1);
      }
      // A second scrape adds nothing that was already published.
      const rescraped = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
      expect(rescraped).toMatch(
        /^scoreboard_requests_total\{method="GetByUsername",code="OK"\} 1$/m,
      );
      expect(metrics).toMatch(/^scoreboard_snapshot_refreshes_total\{outcome="updated"\} 1$/m);
      expect(metrics).toMatch(/^scoreboard_snapshot_age_seconds \d/m);

      const stopped = waitForLog(child, /^stopped$/);
      child.kill("SIGTERM");
      await stopped;
      const [code] = (await exited) as [number | null];
      expect(code).toBe(0);
    } finally {
      child.kill("SIGKILL");
    }
  });

  it("refuses to start on a bad setting and names it", async () => {
    const child = startProcess({
      SCOREBOARD_PORT: "70000",
      SCOREBOARD_SOURCE: "relative/path.csv",
    });
    let stderr = "";
    child.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const [code] = (await once(child, "exit")) as [number | null];
    expect(code).toBe(1);
    expect(stderr).toContain("SCOREBOARD_PORT");
    expect(stderr).toContain("SCOREBOARD_SOURCE: must be an absolute file path");
  });
});

describe("the service's Node flags", () => {
  it("are what pnpm start and the image's ENTRYPOINT run with", () => {
    const scripts = (
      JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
        scripts: Record<string, string>;
      }
    ).scripts;
    expect(scripts.start).toBe(["node", ...NODE_FLAGS, "dist/index.js"].join(" "));
    const entrypoint = /^ENTRYPOINT (.*)$/m.exec(readFileSync(join(ROOT, "Dockerfile"), "utf8"));
    expect(JSON.parse(entrypoint?.[1] ?? "null")).toEqual(["node", ...NODE_FLAGS, "dist/index.js"]);
  });

  it("are named in a warning when the process was started without them", async () => {
    const [port, metricsPort] = [await freePort(), await freePort()];
    const child = startProcess(
      {
        SCOREBOARD_PORT: String(port),
        SCOREBOARD_METRICS_PORT: String(metricsPort),
        SCOREBOARD_HOST: "127.0.0.1",
      },
      [],
    );
    try {
      const warning = await waitForLog(child, /started without the service's Node flags/);
      expect(warning).toMatchObject({ level: 40, missing: [...NODE_FLAGS] });
    } finally {
      child.kill("SIGKILL");
    }
  });
});

describe("loadConfig", () => {
  it("applies the contract's defaults", () => {
    expect(loadConfig({})).toEqual({
      SCOREBOARD_PORT: 50051,
      SCOREBOARD_HOST: "0.0.0.0",
      SCOREBOARD_METRICS_PORT: 9090,
      SCOREBOARD_REFRESH_SECONDS: 300,
      SCOREBOARD_FETCH_TIMEOUT_SECONDS: 30,
      SCOREBOARD_MAX_CONNECTION_AGE_GRACE_SECONDS: 30,
      SCOREBOARD_MAX_SHRINK: 0.5,
      SCOREBOARD_SHUTDOWN_GRACE_SECONDS: 25,
      SCOREBOARD_LOG_LEVEL: "info",
      SCOREBOARD_CORS_ORIGINS: "",
      SCOREBOARD_MAX_CONCURRENT_STREAMS: 100,
      SCOREBOARD_STREAM_IDLE_TIMEOUT_SECONDS: 30,
      SCOREBOARD_MAX_CONNECTIONS: 10_000,
      SCOREBOARD_HEADERS_TIMEOUT_SECONDS: 10,
      SCOREBOARD_REQUEST_TIMEOUT_SECONDS: 30,
    });
  });

  it("refuses a stream or connection limit that is not a positive whole number", () => {
    expect(() => loadConfig({ SCOREBOARD_MAX_CONCURRENT_STREAMS: "0" })).toThrow(
      /SCOREBOARD_MAX_CONCURRENT_STREAMS/,
    );
    expect(() => loadConfig({ SCOREBOARD_MAX_CONNECTIONS: "1.5" })).toThrow(
      /SCOREBOARD_MAX_CONNECTIONS/,
    );
    expect(() => loadConfig({ SCOREBOARD_HEADERS_TIMEOUT_SECONDS: "-1" })).toThrow(
      /SCOREBOARD_HEADERS_TIMEOUT_SECONDS/,
    );
  });

  it("reads every setting", () => {
    const config = loadConfig({
      SCOREBOARD_PORT: "1234",
      SCOREBOARD_SOURCE: "https://example.test/board.json",
      SCOREBOARD_REFRESH_SECONDS: "60",
      SCOREBOARD_MAX_CONNECTION_AGE_SECONDS: "600",
      SCOREBOARD_LOG_LEVEL: "debug",
    });
    expect(config).toMatchObject({
      SCOREBOARD_PORT: 1234,
      SCOREBOARD_SOURCE: "https://example.test/board.json",
      SCOREBOARD_REFRESH_SECONDS: 60,
      SCOREBOARD_MAX_CONNECTION_AGE_SECONDS: 600,
      SCOREBOARD_LOG_LEVEL: "debug",
    });
  });

  it.each([
    ["SCOREBOARD_PORT", "http"],
    ["SCOREBOARD_REFRESH_SECONDS", "0"],
    ["SCOREBOARD_FETCH_TIMEOUT_SECONDS", "-1"],
    ["SCOREBOARD_MAX_SHRINK", "2"],
    ["SCOREBOARD_LOG_LEVEL", "loud"],
    ["SCOREBOARD_SOURCE", "ftp://x/board.csv"],
  ])("rejects %s=%s", (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(name);
  });
});
