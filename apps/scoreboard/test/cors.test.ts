import http2 from "node:http2";
import { parseOrigins } from "../src/cors";
import { SnapshotStore } from "../src/snapshot/store";
import { type Running, rows, snapshotOf, startServer } from "./helpers";

const PAGE = "http://localhost:5173";
const PATH = "/scoreboard.v1.ScoreboardService/GetByRank";
const query = `?connect=v1&encoding=json&message=${encodeURIComponent('{"rank":1}')}`;

async function storeOf(): Promise<SnapshotStore> {
  const store = new SnapshotStore();
  store.swap(await snapshotOf(rows(5)));
  return store;
}

describe("SCOREBOARD_CORS_ORIGINS", () => {
  it("is a comma-separated list", () => {
    expect(parseOrigins(" http://a.example , ,https://b.example")).toEqual([
      "http://a.example",
      "https://b.example",
    ]);
    expect(parseOrigins("")).toEqual([]);
  });
});

describe("CORS with an allow-list", () => {
  let running: Running;

  beforeAll(async () => {
    running = await startServer(await storeOf(), { corsOrigins: [PAGE] });
  });

  afterAll(() => running.shutdown());

  it("answers a preflight with what Connect and gRPC-Web need, never credentials", async () => {
    const response = await fetch(`${running.baseUrl}${PATH}`, {
      method: "OPTIONS",
      headers: {
        origin: PAGE,
        "access-control-request-method": "POST",
        "access-control-request-headers": "content-type,connect-protocol-version,x-grpc-web",
      },
    });
    expect(response.status).toBe(204);
    expect(response.headers.get("access-control-allow-origin")).toBe(PAGE);
    expect(response.headers.get("access-control-allow-credentials")).toBeNull();
    const allowed = (response.headers.get("access-control-allow-headers") ?? "").toLowerCase();
    for (const header of ["content-type", "connect-protocol-version", "x-grpc-web", "grpc-timeout"])
      expect(allowed).toContain(header);
    expect(response.headers.get("access-control-allow-methods")).toContain("POST");
    expect(response.headers.get("access-control-max-age")).toBe("7200");
  });

  it("lets the page read a Connect GET and its ETag, and a 304 carries CORS too", async () => {
    const response = await fetch(`${running.baseUrl}${PATH}${query}`, {
      headers: { origin: PAGE },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("access-control-allow-origin")).toBe(PAGE);
    const exposed = (response.headers.get("access-control-expose-headers") ?? "").toLowerCase();
    expect(exposed).toContain("etag");
    expect(exposed).toContain("grpc-status");
    const again = await fetch(`${running.baseUrl}${PATH}${query}`, {
      headers: { origin: PAGE, "if-none-match": response.headers.get("etag") ?? "" },
    });
    expect(again.status).toBe(304);
    expect(again.headers.get("access-control-allow-origin")).toBe(PAGE);
  });

  it("refuses another origin: no CORS headers, preflight 403", async () => {
    const preflight = await fetch(`${running.baseUrl}${PATH}`, {
      method: "OPTIONS",
      headers: { origin: "https://evil.example", "access-control-request-method": "POST" },
    });
    expect(preflight.status).toBe(403);
    expect(preflight.headers.get("access-control-allow-origin")).toBeNull();
    const simple = await fetch(`${running.baseUrl}${PATH}${query}`, {
      headers: { origin: "https://evil.example" },
    });
    expect(simple.status).toBe(200);
    expect(simple.headers.get("access-control-allow-origin")).toBeNull();
  });

  it("applies over HTTP/2 as well", async () => {
    const session = http2.connect(running.baseUrl);
    try {
      const headers = await new Promise<http2.IncomingHttpHeaders>((resolve, reject) => {
        const stream = session.request({
          ":method": "OPTIONS",
          ":path": PATH,
          origin: PAGE,
          "access-control-request-method": "POST",
        });
        stream.on("response", resolve);
        stream.on("error", reject);
        stream.end();
      });
      expect(headers[":status"]).toBe(204);
      expect(headers["access-control-allow-origin"]).toBe(PAGE);
    } finally {
      session.close();
    }
  });
});

describe("CORS by default", () => {
  let running: Running;

  beforeAll(async () => {
    running = await startServer(await storeOf());
  });

  afterAll(() => running.shutdown());

  it("allows no cross-origin access", async () => {
    const response = await fetch(`${running.baseUrl}${PATH}${query}`, {
      headers: { origin: PAGE },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("access-control-allow-origin")).toBeNull();
  });
});
