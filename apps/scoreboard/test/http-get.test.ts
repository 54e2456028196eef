import http2 from "node:http2";
import { SnapshotStore } from "../src/snapshot/store";
import { type Running, rows, snapshotOf, startServer } from "./helpers";

let running: Running;

beforeAll(async () => {
  const store = new SnapshotStore();
  store.swap(await snapshotOf(rows(20), 1_700_000_000n));
  store.nextRefreshAt = Date.now() + 90_000;
  running = await startServer(store);
});

afterAll(() => running.shutdown());

const get = (path: string, headers: Record<string, string> = {}) =>
  fetch(`${running.baseUrl}/scoreboard.v1.ScoreboardService/${path}`, { headers });

const query = (message: object) =>
  `connect=v1&encoding=json&message=${encodeURIComponent(JSON.stringify(message))}`;

describe("Connect GET caching", () => {
  it.each([
    ["GetByRank", { rank: 2 }],
    ["GetByUsername", { username: "USER2" }],
    ["ListScoreboard", { offset: 1, limit: 1 }],
  ])(
    "%s answers with the snapshot's ETag and a max-age up to the next refresh",
    async (method, message) => {
      const response = await get(`${method}?${query(message)}`);
      expect(response.status).toBe(200);
      const etag = response.headers.get("etag");
      expect(etag).toBe(running.store.current()?.etag);
      expect(etag).toMatch(/^"[0-9a-f]{20}-[0-9a-z]+"$/);
      const maxAge = Number(/max-age=(\d+)/.exec(response.headers.get("cache-control") ?? "")?.[1]);
      expect(maxAge).toBeGreaterThan(80);
      expect(maxAge).toBeLessThanOrEqual(90);
      const body = (await response.json()) as Record<string, unknown>;
      expect(JSON.stringify(body)).toContain('"user2"');
    },
  );

  it("answers 304 with no body to a matching If-None-Match", async () => {
    const first = await get(`GetByRank?${query({ rank: 3 })}`);
    const etag = first.headers.get("etag") ?? "";
    await first.arrayBuffer();
    const second = await get(`GetByRank?${query({ rank: 3 })}`, { "if-none-match": etag });
    expect(second.status).toBe(304);
    expect(second.headers.get("etag")).toBe(etag);
    expect(second.headers.get("cache-control")).toMatch(/max-age=\d+/);
    expect(await second.text()).toBe("");
  });

  it("answers 304 to a weak or listed tag and 200 to another tag", async () => {
    const etag = running.store.current()?.etag ?? "";
    const weak = await get(`GetByRank?${query({ rank: 1 })}`, {
      "if-none-match": `"x", W/${etag}`,
    });
    expect(weak.status).toBe(304);
    const other = await get(`GetByRank?${query({ rank: 1 })}`, { "if-none-match": '"other"' });
    expect(other.status).toBe(200);
    await other.arrayBuffer();
  });

  it("changes the ETag when the snapshot changes, so old copies are fetched again", async () => {
    const old = running.store.current()?.etag ?? "";
    const before = running.store.current();
    running.store.swap(await snapshotOf(rows(21), 1_700_000_500n));
    try {
      const response = await get(`GetByRank?${query({ rank: 21 })}`, { "if-none-match": old });
      expect(response.status).toBe(200);
      expect(response.headers.get("etag")).not.toBe(old);
      await response.arrayBuffer();
    } finally {
      if (before) running.store.swap(before);
    }
  });

  it("sends no ETag on POST, whose answers are not cached", async () => {
    const response = await fetch(`${running.baseUrl}/scoreboard.v1.ScoreboardService/GetByRank`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ rank: 1 }),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("etag")).toBeNull();
    await response.arrayBuffer();
  });

  it("answers 304 over h2c too", async () => {
    const session = http2.connect(running.baseUrl);
    try {
      const etag = running.store.current()?.etag ?? "";
      const status = await new Promise<number>((resolve, reject) => {
        const stream = session.request({
          ":method": "GET",
          ":path": `/scoreboard.v1.ScoreboardService/GetByRank?${query({ rank: 1 })}`,
          "if-none-match": etag,
        });
        stream.on("response", (headers) => resolve(Number(headers[":status"])));
        stream.on("error", reject);
        stream.resume();
      });
      expect(status).toBe(304);
    } finally {
      session.close();
    }
  });
});

describe("HTTP/1.1 and h2c on one port", () => {
  it("answers a plain HTTP/1.1 request and reports its version", async () => {
    const response = await fetch(`${running.baseUrl}/scoreboard.v1.ScoreboardService/GetByRank`, {
      method: "POST",
      headers: { "content-type": "application/json", "connect-protocol-version": "1" },
      body: '{"rank":4}',
    });
    expect(await response.json()).toMatchObject({ rank: 4, username: "user4" });
  });

  it("refuses a request message over 64 KiB", async () => {
    const response = await fetch(
      `${running.baseUrl}/scoreboard.v1.ScoreboardService/GetByUsername`,
      {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ username: "x".repeat(70_000) }),
      },
    );
    expect(await response.json()).toMatchObject({ code: "resource_exhausted" });
  });

  it("answers an unknown path with 404", async () => {
    const response = await fetch(`${running.baseUrl}/nope`);
    expect(response.status).toBe(404);
    await response.arrayBuffer();
  });
});
