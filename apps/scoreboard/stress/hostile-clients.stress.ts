/**
 * Hostile clients against the built service as a real process: each attack of
 * docs/reliability.md's table, then the same checks: the process is alive, a
 * new well-behaved client is answered at once over gRPC and over Connect on
 * HTTP/1.1, its memory stayed bounded, and no metric series was added by the
 * attacker. The limits are set low here (env below) so each one is reached in
 * seconds; their defaults are in docs/reliability.md.
 */
import http from "node:http";
import http2 from "node:http2";
import { readFileSync } from "node:fs";
import net from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { gzipSync, brotliCompressSync } from "node:zlib";
import { until } from "@repo/bench-kit";
import { create, toBinary } from "@bufbuild/protobuf";
import { GetByRankRequestSchema, ListScoreboardRequestSchema } from "@repo/proto-gen/scoreboard/v1";
import { scoreboardClient, transportNamed } from "../test/helpers";
import { FLAG, FRAME, frame, grpcRequestHeaders, headerBlock, rawH2Connection } from "./h2-frames";
import { type ScoreboardProcess, startScoreboard } from "./support";

jest.setTimeout(180_000);

const LIMITS = {
  SCOREBOARD_MAX_CONCURRENT_STREAMS: "50",
  SCOREBOARD_STREAM_IDLE_TIMEOUT_SECONDS: "3",
  SCOREBOARD_MAX_CONNECTIONS: "300",
  SCOREBOARD_HEADERS_TIMEOUT_SECONDS: "2",
  SCOREBOARD_REQUEST_TIMEOUT_SECONDS: "4",
};
/**
 * Memory the process may grow by during one attack, over what it held before it
 * (the attacks this suite was written for took it up by 700 MB to 1.4 GB).
 */
const RSS_GROWTH_MAX_MB = 150;

let scoreboard: ScoreboardProcess;
let rssBefore: number;
let rssAllowance: number;

/** The process's resident memory, in MiB. */
function rssMb(): number {
  const status = readFileSync(`/proc/${String(scoreboard.child.pid)}/status`, "utf8");
  const kb = /VmRSS:\s+(\d+)/.exec(status)?.[1];
  return Number(kb) / 1024;
}

function grpcFrame(bytes: Uint8Array, compressed = false): Buffer {
  const out = Buffer.alloc(5 + bytes.length);
  out[0] = compressed ? 1 : 0;
  out.writeUInt32BE(bytes.length, 1);
  out.set(bytes, 5);
  return out;
}

const rankRequest = (rank: number) =>
  toBinary(GetByRankRequestSchema, create(GetByRankRequestSchema, { rank }));

/** A new client's calls are answered at once, over gRPC (h2c) and Connect (HTTP/1.1). */
async function servesOthers(): Promise<void> {
  expect(scoreboard.child.exitCode).toBeNull();
  for (const name of ["gRPC (h2c)", "Connect POST (HTTP/1.1)"] as const) {
    const client = scoreboardClient(transportNamed(scoreboard.baseUrl, name));
    const started = Date.now();
    const entry = await client.getByRank({ rank: 3 }, { timeoutMs: 5000 });
    expect(entry.rank).toBe(3);
    expect(Date.now() - started).toBeLessThan(5000);
  }
}

/** The memory and metrics checks every attack ends with. */
async function held(): Promise<void> {
  await servesOthers();
  expect(rssMb() - rssBefore).toBeLessThan(rssAllowance);
  const metrics = await scoreboard.metrics();
  const methods = new Set(
    [...metrics.matchAll(/^scoreboard_requests_total\{method="([^"]*)"/gm)].map((m) => m[1]),
  );
  for (const method of methods)
    expect(["ListScoreboard", "GetByRank", "GetByUsername"]).toContain(method);
}

/** Resolves once `socket` is closed by the server, with the milliseconds that took. */
function closedWithin(socket: net.Socket): Promise<number> {
  const started = Date.now();
  return new Promise((resolve) => {
    if (socket.destroyed) resolve(0);
    else socket.once("close", () => resolve(Date.now() - started));
  });
}

beforeAll(async () => {
  scoreboard = await startScoreboard(LIMITS);
  const client = scoreboardClient(transportNamed(scoreboard.baseUrl, "gRPC (h2c)"));
  while ((await client.listScoreboard({ limit: 1 }).catch(() => undefined)) === undefined)
    await sleep(100);
});

beforeEach(() => {
  rssBefore = rssMb();
  rssAllowance = RSS_GROWTH_MAX_MB;
});

afterEach(async () => {
  await held();
});

afterAll(() => {
  scoreboard.child.kill("SIGKILL");
});

describe("attacks that once took the process down", () => {
  it("half a gRPC message, then RST_STREAM INTERNAL_ERROR, 300 times on each path", async () => {
    const session = http2.connect(scoreboard.baseUrl);
    session.on("error", () => undefined);
    const half = grpcFrame(rankRequest(5)).subarray(0, 4);
    for (let i = 0; i < 300; i++) {
      // Without an Origin header a call takes the fast lane; with one, the connect-es path.
      const stream = session.request({
        ":method": "POST",
        ":path": "/scoreboard.v1.ScoreboardService/GetByRank",
        "content-type": "application/grpc",
        te: "trailers",
        ...(i % 2 === 1 ? { origin: "http://elsewhere.test" } : {}),
      });
      stream.on("error", () => undefined);
      stream.write(half);
      await new Promise((resolve) => setImmediate(resolve));
      stream.close(http2.constants.NGHTTP2_INTERNAL_ERROR);
    }
    await sleep(200);
    session.destroy();
  });

  it("300 ListScoreboard streams on a connection that never opens its receive window", async () => {
    const session = http2.connect(scoreboard.baseUrl, { settings: { initialWindowSize: 0 } });
    session.on("error", () => undefined);
    const closed: Promise<number | undefined>[] = [];
    const request = grpcFrame(
      toBinary(ListScoreboardRequestSchema, create(ListScoreboardRequestSchema, { limit: 0 })),
    );
    for (let i = 0; i < 300; i++) {
      const stream = session.request({
        ":method": "POST",
        ":path": "/scoreboard.v1.ScoreboardService/ListScoreboard",
        "content-type": i % 3 === 0 ? "application/proto" : "application/grpc",
        ...(i % 3 === 0 ? {} : { te: "trailers" }),
      });
      stream.on("error", () => undefined);
      stream.end(i % 3 === 0 ? request.subarray(5) : request);
      closed.push(new Promise((resolve) => stream.once("close", () => resolve(stream.rstCode))));
    }
    // Past the stream cap they are refused; the answers that cannot be sent
    // hold their streams until the idle timeout (3 s here) resets them
    // (CANCEL), on every path, the fast lane's included. None stays open.
    const codes = await Promise.race([Promise.all(closed), sleep(8000).then(() => [])]);
    expect(codes).toHaveLength(300);
    expect(codes.filter((code) => code === 0 || code === undefined)).toEqual([]);
    expect(codes.filter((code) => code === http2.constants.NGHTTP2_CANCEL).length).toBeGreaterThan(
      0,
    );
    session.destroy();
    await sleep(200);
  });

  it("answers 2,000 made-up method names with If-None-Match: * as unknown, adding no metric series", async () => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });
    const statuses = new Set<number>();
    const ask = (i: number) =>
      new Promise<void>((resolve, reject) => {
        http
          .get(
            `${scoreboard.baseUrl}/scoreboard.v1.ScoreboardService/MadeUp${String(i)}?message=%7B%7D&encoding=json`,
            { agent, headers: { "if-none-match": "*" } },
            (res) => {
              statuses.add(res.statusCode ?? 0);
              res.resume();
              res.on("end", resolve);
            },
          )
          .on("error", reject);
      });
    for (let i = 0; i < 2000; i += 8)
      await Promise.all([...Array(8).keys()].map((k) => ask(i + k)));
    agent.destroy();
    expect([...statuses]).toEqual([404]);
    expect(await scoreboard.metrics()).not.toContain("MadeUp");
  });

  it("8 connections x 3,000 gRPC streams that never finish: at most the stream cap each, timed out when idle", async () => {
    const connections = await Promise.all(
      [...Array(8).keys()].map(() => rawH2Connection(scoreboard.port)),
    );
    const headers = grpcRequestHeaders("GetByRank");
    for (const connection of connections) {
      const frames: Buffer[] = [];
      for (let i = 0; i < 3000; i++)
        frames.push(frame(FRAME.HEADERS, FLAG.END_HEADERS, 1 + 2 * i, headers));
      connection.write(Buffer.concat(frames));
    }
    await sleep(1000);
    expect(rssMb() - rssBefore).toBeLessThan(RSS_GROWTH_MAX_MB);
    // Each connection: the streams past the cap refused (or the connection ended for
    // opening too many: Node destroys a session past 100 refused streams, and the
    // socket may close before its GOAWAY is out), and the rest reset once idle for the
    // stream timeout (3 s; a busy machine may take longer to get there).
    const ended = (connection: (typeof connections)[number]) =>
      (connection.received.get(FRAME.RST_STREAM) ?? 0) === 3000 ||
      (connection.received.get(FRAME.GOAWAY) ?? 0) > 0 ||
      connection.socket.closed;
    await until(
      () => connections.every(ended),
      30_000,
      "every connection past the cap to be reset or ended",
    );
    for (const connection of connections) connection.socket.destroy();
    // One connection at the cap: all 50 streams are reset after the idle timeout.
    const single = await rawH2Connection(scoreboard.port);
    for (let i = 0; i < 50; i++)
      single.write(frame(FRAME.HEADERS, FLAG.END_HEADERS, 1 + 2 * i, headers));
    await sleep(1000);
    expect(single.received.get(FRAME.RST_STREAM) ?? 0).toBe(0);
    await until(
      () => single.received.get(FRAME.RST_STREAM) === 50,
      30_000,
      "the 50 idle streams at the cap to be reset",
    );
    single.socket.destroy();
  });

  it("closes HTTP/1.1 request heads that never end, and bodies that never end", async () => {
    const heads = await Promise.all(
      [...Array(100).keys()].map(async () => {
        const socket = net.connect(scoreboard.port, "127.0.0.1");
        socket.on("error", () => undefined);
        await new Promise((resolve) => socket.once("connect", resolve));
        socket.write("GET /scoreboard.v1.ScoreboardService/GetByRank HTTP/1.1\r\nHost: a\r\n");
        // A header line every half second: the head never ends, the socket is never idle.
        const drip = setInterval(() => socket.writable && socket.write("X-Drip: 1\r\n"), 500);
        socket.once("close", () => clearInterval(drip));
        return socket;
      }),
    );
    const body = net.connect(scoreboard.port, "127.0.0.1");
    body.on("error", () => undefined);
    await new Promise((resolve) => body.once("connect", resolve));
    body.write(
      "POST /scoreboard.v1.ScoreboardService/GetByRank HTTP/1.1\r\nHost: a\r\n" +
        "Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{",
    );
    const drip = setInterval(() => body.writable && body.write(" "), 500);
    const times = await Promise.all(heads.map(closedWithin));
    // Checked once a second (connectionsCheckingInterval) against the 2 s head limit.
    expect(Math.max(...times)).toBeLessThan(2000 + 2500);
    expect(await closedWithin(body)).toBeLessThan(4000 + 2500);
    clearInterval(drip);
  });

  it("refuses connections past the cap while the metrics port keeps answering", async () => {
    const held: net.Socket[] = [];
    for (let i = 0; i < 300; i++) {
      const socket = net.connect(scoreboard.port, "127.0.0.1");
      socket.on("error", () => undefined);
      held.push(socket);
    }
    await Promise.all(held.map((s) => new Promise((resolve) => s.once("connect", resolve))));
    await sleep(200);
    const extra = net.connect(scoreboard.port, "127.0.0.1");
    extra.on("error", () => undefined);
    expect(await closedWithin(extra)).toBeLessThan(2000);
    expect(await scoreboard.metrics()).toContain("scoreboard_snapshot_entries 10000");
    for (const socket of held) socket.destroy();
    await sleep(300);
  });

  it("connections reset before their first bytes, 200 times", async () => {
    for (let i = 0; i < 200; i++) {
      const socket = net.connect(scoreboard.port, "127.0.0.1");
      socket.on("error", () => undefined);
      await new Promise((resolve) => socket.once("connect", resolve));
      if (i % 2 === 1) socket.write("PRI * HTTP/2.0\r\n");
      socket.resetAndDestroy();
    }
    await sleep(200);
  });
});

describe("attacks that held (kept holding)", () => {
  it("rapid reset: 5,000 HEADERS each followed by RST_STREAM on one connection", async () => {
    const connection = await rawH2Connection(scoreboard.port);
    const headers = grpcRequestHeaders("GetByRank");
    const frames: Buffer[] = [];
    for (let i = 0; i < 5000; i++) {
      frames.push(frame(FRAME.HEADERS, FLAG.END_HEADERS, 1 + 2 * i, headers));
      frames.push(frame(FRAME.RST_STREAM, 0, 1 + 2 * i, Buffer.from([0, 0, 0, 8])));
    }
    connection.write(Buffer.concat(frames));
    await Promise.race([connection.closed, sleep(3000)]);
    expect(connection.received.get(FRAME.GOAWAY)).toBeGreaterThan(0);
    connection.socket.destroy();
  });

  it("CONTINUATION without end: the connection is closed, the headers not kept", async () => {
    const connection = await rawH2Connection(scoreboard.port);
    connection.write(frame(FRAME.HEADERS, 0, 1, grpcRequestHeaders("GetByRank")));
    const filler = headerBlock([["x-filler", "y".repeat(100)]]);
    for (let i = 0; i < 20_000 && !connection.socket.destroyed; i++) {
      if (!connection.write(frame(FRAME.CONTINUATION, 0, 1, filler)))
        await Promise.race([
          new Promise((resolve) => connection.socket.once("drain", resolve)),
          connection.closed,
        ]);
    }
    await Promise.race([connection.closed, sleep(3000)]);
    expect(connection.socket.destroyed || connection.socket.readableEnded).toBe(true);
  });

  it.each([
    ["SETTINGS", () => frame(FRAME.SETTINGS, 0, 0)],
    ["PING", () => frame(FRAME.PING, 0, 0, Buffer.alloc(8))],
    ["WINDOW_UPDATE", () => frame(FRAME.WINDOW_UPDATE, 0, 0, Buffer.from([0, 0, 0, 1]))],
    ["PRIORITY", () => frame(FRAME.PRIORITY, 0, 3, Buffer.from([0, 0, 0, 1, 16]))],
  ])("a flood of 50,000 %s frames, never reading the answers", async (_name, make) => {
    const connection = await rawH2Connection(scoreboard.port);
    connection.socket.pause(); // read nothing: the server's answers pile up on its side
    const one = make();
    const batch = Buffer.concat(Array.from({ length: 1000 }, () => one));
    for (let i = 0; i < 50 && !connection.socket.destroyed; i++) {
      if (!connection.write(batch))
        await Promise.race([
          new Promise((resolve) => connection.socket.once("drain", resolve)),
          connection.closed,
          sleep(2000),
        ]);
    }
    expect(rssMb() - rssBefore).toBeLessThan(RSS_GROWTH_MAX_MB);
    connection.socket.destroy();
  });

  it.each([
    ["Connect, gzip", "/scoreboard.v1.ScoreboardService/GetByRank", "connect"],
    ["gRPC, gzip", "/scoreboard.v1.ScoreboardService/GetByRank", "grpc"],
    ["gRPC-Web, brotli", "/scoreboard.v1.ScoreboardService/GetByRank", "grpc-web"],
  ] as const)(
    "a compression bomb (%s): refused past 64 KiB decompressed",
    async (_n, path, kind) => {
      const zeros = Buffer.alloc(16 * 1024 * 1024);
      const session = http2.connect(scoreboard.baseUrl);
      session.on("error", () => undefined);
      const headers: http2.OutgoingHttpHeaders =
        kind === "connect"
          ? { "content-type": "application/proto", "content-encoding": "gzip" }
          : kind === "grpc"
            ? { "content-type": "application/grpc", "grpc-encoding": "gzip", te: "trailers" }
            : { "content-type": "application/grpc-web+proto", "grpc-encoding": "br" };
      const body =
        kind === "connect"
          ? gzipSync(zeros)
          : grpcFrame(kind === "grpc" ? gzipSync(zeros) : brotliCompressSync(zeros), true);
      const stream = session.request({ ":method": "POST", ":path": path, ...headers });
      const answer = await new Promise<{ status: number; grpc: string; body: string }>(
        (resolve, reject) => {
          let status = 0;
          let grpc = "";
          const chunks: Buffer[] = [];
          stream.on("response", (h) => {
            status = Number(h[":status"]);
            grpc = String(h["grpc-status"] ?? "");
          });
          stream.on(
            "trailers",
            (t: http2.IncomingHttpHeaders) => (grpc = String(t["grpc-status"] ?? grpc)),
          );
          stream.on("data", (c: Buffer) => chunks.push(c));
          stream.on("end", () => resolve({ status, grpc, body: Buffer.concat(chunks).toString() }));
          stream.on("error", reject);
          stream.end(body);
        },
      );
      session.close();
      if (kind === "connect") {
        expect(answer.status).toBe(429);
        expect(answer.body).toContain("resource_exhausted");
      } else if (kind === "grpc") {
        expect(answer.grpc).toBe("8");
      } else {
        expect(answer.body).toContain("grpc-status: 8");
      }
    },
  );

  it("malformed gRPC: an envelope that claims 4 GiB, a cut envelope, a second message", async () => {
    const session = http2.connect(scoreboard.baseUrl);
    session.on("error", () => undefined);
    const call = (body: Buffer) =>
      new Promise<string>((resolve, reject) => {
        const stream = session.request({
          ":method": "POST",
          ":path": "/scoreboard.v1.ScoreboardService/GetByRank",
          "content-type": "application/grpc",
          te: "trailers",
        });
        let status = "";
        stream.on("response", (h) => (status = String(h["grpc-status"] ?? "")));
        stream.on(
          "trailers",
          (t: http2.IncomingHttpHeaders) => (status = String(t["grpc-status"] ?? status)),
        );
        stream.on("end", () => resolve(status));
        stream.on("error", reject);
        stream.resume();
        stream.end(body);
      });
    const huge = Buffer.from([0, 0xff, 0xff, 0xff, 0xff]);
    const one = grpcFrame(rankRequest(1));
    expect(await call(huge)).toBe("8");
    expect(await call(one.subarray(0, one.length - 1))).toBe("3");
    expect(await call(Buffer.concat([one, one]))).toBe("12");
    session.close();
  });

  it("slow readers on the Connect path: 20 full-board answers never read", async () => {
    // What this costs is bounded by streams x answer size (docs/reliability.md): one full
    // board in JSON, held as the encoded body and the frames queued for the client.
    const full = await fetch(
      `${scoreboard.baseUrl}/scoreboard.v1.ScoreboardService/ListScoreboard`,
      {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: "{}",
      },
    );
    const answerMb = (await full.arrayBuffer()).byteLength / 2 ** 20;
    const SLOW_READS = 20;
    expect(answerMb).toBeGreaterThan(0.5);
    rssBefore = rssMb();
    const session = http2.connect(scoreboard.baseUrl, { settings: { initialWindowSize: 0 } });
    session.on("error", () => undefined);
    const codes: number[] = [];
    for (let i = 0; i < SLOW_READS; i++) {
      const stream = session.request({
        ":method": "POST",
        ":path": "/scoreboard.v1.ScoreboardService/ListScoreboard",
        "content-type": "application/json",
      });
      stream.on("error", () => undefined);
      stream.on("close", () => codes.push(stream.rstCode));
      stream.end("{}");
    }
    await sleep(1500);
    rssAllowance = SLOW_READS * answerMb * 3 + 50;
    expect(rssMb() - rssBefore).toBeLessThan(rssAllowance);
    // Idle past the stream timeout (3 s here, counted from each answer's last write):
    // every stream is reset and its answer let go.
    // (Each answer takes a few hundred ms to encode on a busy machine: a generous wait.)
    for (let waited = 0; codes.length < SLOW_READS && waited < 60_000; waited += 250)
      await sleep(250);
    expect(codes).toEqual(Array(SLOW_READS).fill(http2.constants.NGHTTP2_CANCEL));
    session.destroy();
  });
});
