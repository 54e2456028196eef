import { once } from "node:events";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { createMetrics } from "../src/metrics";
import { workerLoader } from "../src/snapshot/load-in-worker";
import { Refresher } from "../src/snapshot/refresher";
import { httpSource } from "../src/snapshot/sources";
import { SnapshotStore } from "../src/snapshot/store";
import {
  type Running,
  scoreboardClient,
  silent,
  snapshotOf,
  startServer,
  transportNamed,
  rows,
} from "./helpers";

jest.setTimeout(120_000);

const BIG = 1_000_000;
const OLD_AT = 1_000n;

/** A 1,000,000-row CSV board whose usernames say which board they belong to. */
function bigCsv(): Buffer {
  const lines = ["rank,username,profile_path,country,grade,score"];
  for (let rank = 1; rank <= BIG; rank++)
    lines.push(`${rank},new${rank},/u/new${rank},DE,A,${BIG - rank}`);
  return Buffer.from(`${lines.join("\n")}\n`);
}

let running: Running;
let upstream: http.Server;
let url: string;

beforeAll(async () => {
  const body = bigCsv();
  upstream = http.createServer((_req, res) =>
    res.writeHead(200, { "content-type": "text/csv" }).end(body),
  );
  upstream.listen(0, "127.0.0.1");
  await once(upstream, "listening");
  url = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/board.csv`;
  const store = new SnapshotStore();
  store.swap(await snapshotOf(rows(1000, "old"), OLD_AT));
  running = await startServer(store);
});

afterAll(async () => {
  upstream.closeAllConnections();
  upstream.close();
  await running.shutdown();
});

it("answers reads from the old snapshot during a 1,000,000-entry refresh, never mixing the two", async () => {
  const { store } = running;
  const refresher = new Refresher({
    // The real loading worker and process, at normal priority: in production it parses at the
    // lowest (LOAD_NICE) to yield to the service's calls, but here other test
    // suites may fill both cores and would starve it. What a lower priority buys
    // is measured by `pnpm bench`, not here.
    load: workerLoader(0),
    source: httpSource(url),
    store,
    logger: silent,
    metrics: createMetrics(store),
    periodMs: 3_600_000,
    timeoutMs: 60_000,
    maxShrink: 0.5,
  });
  const client = scoreboardClient(transportNamed(running.baseUrl, "gRPC (h2c)"));
  const refresh = { done: false };
  const refreshing = refresher.refresh().finally(() => {
    refresh.done = true;
  });
  const seen = { old: 0, new: 0, duringRefresh: 0 };
  while (!refresh.done || seen.new < 20) {
    const [page, byRank] = await Promise.all([
      client.listScoreboard({ offset: 500, limit: 3 }),
      client.getByRank({ rank: 999 }),
    ]);
    const board = page.total === 1000 ? "old" : "new";
    // Everything in one response comes from one snapshot.
    if (board === "old") {
      expect(page.fetchedAt).toBe(OLD_AT);
      expect(page.entries.map((e) => e.username)).toEqual(["old501", "old502", "old503"]);
      seen.old += 1;
      if (!refresh.done) seen.duringRefresh += 1;
    } else {
      expect(page.total).toBe(BIG);
      expect(page.fetchedAt).not.toBe(OLD_AT);
      expect(page.entries.map((e) => e.username)).toEqual(["new501", "new502", "new503"]);
      seen.new += 1;
    }
    expect(byRank.username.startsWith("old") || byRank.username.startsWith("new")).toBe(true);
  }
  expect(await refreshing).toBe("updated");
  refresher.stop();
  expect(seen.duringRefresh).toBeGreaterThan(10);
  expect(seen.new).toBeGreaterThanOrEqual(20);
  expect(await client.getByUsername({ username: "NEW999999" })).toMatchObject({
    rank: 999_999,
    score: 1,
  });
  expect(store.current()?.total).toBe(BIG);
});
