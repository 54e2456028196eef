import { setTimeout as sleep } from "node:timers/promises";
import { once } from "node:events";
import { mkdtemp, writeFile } from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { Writable } from "node:stream";
import pino from "pino";
import { until } from "@repo/bench-kit";
import { createMetrics } from "../src/metrics";
import { workerLoader } from "../src/snapshot/load-in-worker";
import { Refresher, type RefresherOptions } from "../src/snapshot/refresher";
import { sourceFromSetting } from "../src/snapshot/sources";
import { SnapshotStore } from "../src/snapshot/store";
import { type Running, rows, scoreboardClient, startServer, transportNamed } from "./helpers";

type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => void;

/** A stand-in for the upstream scoreboard site: a real local HTTP server whose answer each test sets. */
class Upstream {
  handler: Handler = (_req, res) => res.writeHead(500).end();
  readonly requests: http.IncomingHttpHeaders[] = [];
  private readonly server = http.createServer((req, res) => {
    this.requests.push(req.headers);
    this.handler(req, res);
  });
  url = "";

  async start(): Promise<void> {
    this.server.listen(0, "127.0.0.1");
    await once(this.server, "listening");
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/board.json`;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }

  serveJson(body: unknown, headers: Record<string, string> = {}): void {
    this.handler = (_req, res) => {
      res
        .writeHead(200, { "content-type": "application/json", ...headers })
        .end(JSON.stringify(body));
    };
  }
}

/** Log lines, parsed, for assertions on what the refresher said. */
function capturedLogger(): { logger: pino.Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      done();
    },
  });
  return { logger: pino({ level: "info" }, sink), lines };
}

let upstream: Upstream;
let clock: number;

beforeEach(async () => {
  upstream = new Upstream();
  await upstream.start();
  clock = 1_800_000_000_000;
});

/** Every refresher a test made: stopped after it, so that none refreshes on its timer into later tests. */
const refreshers: Refresher[] = [];

afterEach(() => {
  for (const refresher of refreshers.splice(0)) refresher.stop();
  return upstream.stop();
});

function refresherFor(store: SnapshotStore, overrides: Partial<RefresherOptions> = {}) {
  const { logger, lines } = capturedLogger();
  const metrics = createMetrics(store, () => clock);
  const refresher = new Refresher({
    // The real loading worker and process at normal priority: other suites may fill both
    // cores, and would starve production's lowest priority (see large-refresh).
    load: workerLoader(0),
    source: sourceFromSetting(upstream.url),
    store,
    logger,
    metrics,
    periodMs: 60_000,
    timeoutMs: 2_000,
    maxShrink: 0.5,
    minBackoffMs: 1_000,
    jitter: 0,
    now: () => clock,
    ...overrides,
  });
  refreshers.push(refresher);
  return { refresher, lines, metrics };
}

describe("refreshing from an HTTP upstream", () => {
  let running: Running;
  let store: SnapshotStore;

  beforeEach(async () => {
    store = new SnapshotStore();
    running = await startServer(store);
  });

  afterEach(() => running.shutdown());

  const list = () =>
    scoreboardClient(transportNamed(running.baseUrl, "gRPC (h2c)")).listScoreboard({});

  it("keeps serving the last good snapshot, with its old fetched_at, through every kind of bad fetch", async () => {
    // The limit is what the hang below runs into; every other fetch is a few bytes
    // on loopback and ends far sooner, on a busy machine and in a fresh process too.
    const { refresher, lines, metrics } = refresherFor(store, { timeoutMs: 3000 });
    upstream.serveJson(rows(4, "good"));
    expect(await refresher.refresh()).toBe("updated");
    const good = await list();
    expect(good.fetchedAt).toBe(1_800_000_000n);
    expect(good.total).toBe(4);

    const bad: [string, Handler, string][] = [
      ["a 500", (_q, s) => s.writeHead(500).end("oops"), "failed"],
      ["malformed rows", (_q, s) => s.writeHead(200).end('[{"username": 5}]'), "rejected"],
      [
        "duplicate usernames",
        (_q, s) =>
          s.writeHead(200).end(JSON.stringify(rows(4).map((r) => ({ ...r, username: "x" })))),
        "rejected",
      ],
      [
        "garbage",
        (_q, s) =>
          s.writeHead(200, { "content-type": "application/json" }).end("\u0000\u0001garbage"),
        "rejected",
      ],
      [
        "a truncated body",
        (_q, s) => {
          s.writeHead(200, { "content-length": "1000" });
          s.write(JSON.stringify(rows(4)).slice(0, 50));
          setTimeout(() => s.destroy(), 20);
        },
        "failed",
      ],
      ["a hang past the timeout", () => undefined, "failed"],
      [
        "a shrunken board",
        (_q, s) => s.writeHead(200).end(JSON.stringify(rows(1, "small"))),
        "rejected",
      ],
    ];
    for (const [what, handler, outcome] of bad) {
      clock += 10_000;
      upstream.handler = handler;
      expect([what, await refresher.refresh()]).toEqual([what, outcome]);
      const page = await list();
      expect([what, page.fetchedAt, page.total, page.entries[0]?.username]).toEqual([
        what,
        1_800_000_000n,
        4,
        "good1",
      ]);
    }
    const failures = lines.filter((line) => line.msg === "scoreboard refresh failed");
    expect(failures.map((line) => line.reason)).toEqual([
      "upstream answered HTTP 500",
      "row 1: username must be a string",
      'row 2: username "x" repeated',
      "body is not valid JSON",
      expect.stringMatching(/terminated|closed|socket/i),
      "fetch timed out after 3 s",
      "board shrank from 4 to 1 entries (more than 50 %)",
    ]);
    const counted = await metrics.registry.getSingleMetricAsString(
      "scoreboard_snapshot_refreshes_total",
    );
    expect(counted).toContain('outcome="updated"} 1');
    expect(counted).toContain('outcome="rejected"} 4');
    expect(counted).toContain('outcome="failed"} 3');

    clock += 10_000;
    upstream.serveJson({ fetched_at: 1_799_999_999, entries: rows(3, "fresh") });
    expect(await refresher.refresh()).toBe("updated");
    const fresh = await list();
    expect([fresh.fetchedAt, fresh.total, fresh.entries[0]?.username]).toEqual([
      1_799_999_999n,
      3,
      "fresh1",
    ]);
  });

  it("fetches conditionally and answers a 304 by keeping the data with a new fetched_at", async () => {
    const { refresher } = refresherFor(store);
    upstream.handler = (req, res) => {
      if (req.headers["if-none-match"] === '"v1"') res.writeHead(304).end();
      else {
        res.writeHead(200, { etag: '"v1"', "last-modified": "Sat, 21 Nov 2026 10:00:00 GMT" });
        res.end(JSON.stringify(rows(3)));
      }
    };
    await refresher.refresh();
    const first = store.current();
    clock += 60_000;
    expect(await refresher.refresh()).toBe("not_modified");
    expect(upstream.requests[0]?.["if-none-match"]).toBeUndefined();
    expect(upstream.requests[1]?.["if-none-match"]).toBe('"v1"');
    expect(upstream.requests[1]?.["if-modified-since"]).toBe("Sat, 21 Nov 2026 10:00:00 GMT");
    const second = store.current();
    expect(second?.data).toBe(first?.data);
    expect(second?.fetchedAt).toBe(1_800_000_060n);
    expect((await list()).fetchedAt).toBe(1_800_000_060n);
  });

  it("does not send validators of data it rejected", async () => {
    const { refresher } = refresherFor(store);
    upstream.serveJson(rows(2), { etag: '"good"' });
    await refresher.refresh();
    upstream.serveJson([{ bad: true }], { etag: '"bad"' });
    expect(await refresher.refresh()).toBe("rejected");
    await refresher.refresh();
    expect(upstream.requests.map((headers) => headers["if-none-match"])).toEqual([
      undefined,
      '"good"',
      '"good"',
    ]);
  });
});

describe("scheduling", () => {
  it("backs off exponentially after failures, capped by the period, and resets after a success", async () => {
    const store = new SnapshotStore();
    const { refresher } = refresherFor(store, { periodMs: 5_000 });
    const delays: number[] = [];
    for (let i = 0; i < 5; i++) {
      await refresher.refresh();
      delays.push(store.nextRefreshAt - clock);
    }
    upstream.serveJson(rows(1));
    await refresher.refresh();
    delays.push(store.nextRefreshAt - clock);
    refresher.stop();
    expect(delays).toEqual([1_000, 2_000, 4_000, 5_000, 5_000, 5_000]);
  });

  it("runs one fetch at a time", async () => {
    const store = new SnapshotStore();
    const { refresher } = refresherFor(store);
    upstream.handler = (_req, res) =>
      setTimeout(() => res.writeHead(200).end(JSON.stringify(rows(2))), 100);
    const outcomes = await Promise.all([
      refresher.refresh(),
      refresher.refresh(),
      refresher.refresh(),
    ]);
    refresher.stop();
    expect(outcomes).toEqual(["updated", "updated", "updated"]);
    expect(upstream.requests).toHaveLength(1);
  });

  it("refreshes by itself on the timer", async () => {
    const store = new SnapshotStore();
    const { refresher } = refresherFor(store, { periodMs: 50, now: Date.now });
    upstream.serveJson(rows(2));
    refresher.start();
    // However long each refresh takes on a busy machine, the timer starts the
    // next by itself.
    await until(() => upstream.requests.length >= 3, 30_000, "the third refresh", 20);
    refresher.stop();
    expect(store.current()?.total).toBe(2);
  });
});

describe("file sources", () => {
  it("loads CSV from an absolute path and JSON from a file:// URL", async () => {
    const dir = await mkdtemp(join(tmpdir(), "board-"));
    const csvPath = join(dir, "board.csv");
    const jsonPath = join(dir, "board.json");
    await writeFile(csvPath, "username,profile_path,country,grade,score\nzed,/z,SE,B,7\n");
    await writeFile(jsonPath, JSON.stringify({ fetched_at: 42, entries: rows(2) }));
    const store = new SnapshotStore();
    const fromCsv = refresherFor(store, { source: sourceFromSetting(csvPath) }).refresher;
    expect(await fromCsv.refresh()).toBe("updated");
    expect(store.current()?.byUsername("ZED")?.score).toBe(7);
    const fromJson = refresherFor(store, {
      source: sourceFromSetting(pathToFileURL(jsonPath).href),
      maxShrink: 0,
    });
    expect(await fromJson.refresher.refresh()).toBe("updated");
    expect(store.current()?.fetchedAt).toBe(42n);
    expect(store.current()?.total).toBe(2);
  });

  it("reads a file again only when it changed, and keeps the date a board gives itself", async () => {
    const dir = await mkdtemp(join(tmpdir(), "board-"));
    const path = join(dir, "board.json");
    const board = (fetchedAt: number, score: number) =>
      JSON.stringify({ fetched_at: fetchedAt, entries: [{ ...rows(1)[0], score }] });
    await writeFile(path, board(42, 100));
    const store = new SnapshotStore();
    const { refresher, lines } = refresherFor(store, { source: sourceFromSetting(path) });
    expect(await refresher.refresh()).toBe("updated");
    const first = store.current();
    clock += 60_000;
    // Not read again: no change is reported as not modified, the data and its own date kept.
    expect(await refresher.refresh()).toBe("not_modified");
    expect(lines.at(-1)?.outcome).toBe("not_modified");
    expect(store.current()?.data).toBe(first?.data);
    expect(store.current()?.fetchedAt).toBe(42n);
    // Rewritten in place with as many bytes: its change times tell.
    await sleep(20);
    await writeFile(path, board(43, 101));
    expect(await refresher.refresh()).toBe("updated");
    expect(store.current()?.fetchedAt).toBe(43n);
    expect(store.current()?.byRank(1)?.score).toBe(101);
  });

  it("dates an unchanged board without a date of its own at each refresh", async () => {
    const dir = await mkdtemp(join(tmpdir(), "board-"));
    const path = join(dir, "board.csv");
    await writeFile(path, "username,profile_path,country,grade,score\nzed,/z,SE,B,7\n");
    const store = new SnapshotStore();
    const { refresher } = refresherFor(store, { source: sourceFromSetting(path) });
    await refresher.refresh();
    clock += 60_000;
    expect(await refresher.refresh()).toBe("not_modified");
    expect(store.current()?.fetchedAt).toBe(1_800_000_060n);
  });

  it("makes the demo board once", async () => {
    const store = new SnapshotStore();
    const { refresher } = refresherFor(store, { source: sourceFromSetting(undefined) });
    expect(await refresher.refresh()).toBe("updated");
    expect(await refresher.refresh()).toBe("not_modified");
    expect(store.current()?.total).toBe(10_000);
  });

  it("fails cleanly on a missing file", async () => {
    const store = new SnapshotStore();
    const { refresher, lines } = refresherFor(store, {
      source: sourceFromSetting("/nonexistent/board.csv"),
    });
    expect(await refresher.refresh()).toBe("failed");
    expect(lines.at(-1)?.reason).toMatch(/ENOENT/);
    expect(store.current()).toBeUndefined();
  });
});
