import { setTimeout as sleep } from "node:timers/promises";
import http2 from "node:http2";
import { create, toBinary } from "@bufbuild/protobuf";
import fc from "fast-check";
import {
  GetByRankRequestSchema,
  GetByUsernameRequestSchema,
  ListScoreboardRequestSchema,
} from "@repo/proto-gen/scoreboard/v1";
import { createGrpcFastLane, datedResponseHeaders } from "../src/grpc-fast-lane";
import { SnapshotStore } from "../src/snapshot/store";
import { type RawAnswer, envelope, rawH2 } from "./raw-client";
import {
  type LanePair,
  type Row,
  rows,
  snapshotOf,
  startLanePair,
  startServer,
  withLaneAlone,
} from "./helpers";

/**
 * The gRPC fast lane against connect-es, on the same snapshot: generated calls
 * (well-formed and hostile) sent to a server with the lane and to one without
 * must get the very same status, trailers and reply bytes.
 */
const SEED = 20_261_123;
const RUNS = 600;

const BOARD: Row[] = [
  ...rows(30),
  { rank: 31, username: "Zoë", profile_path: "/u/z", country: "", grade: "", score: -5 },
  { rank: 32, username: "zoë", profile_path: "", country: "NL", grade: "B", score: 0 },
];
const PATH = "/scoreboard.v1.ScoreboardService/";
const rankOne = envelope(
  toBinary(GetByRankRequestSchema, create(GetByRankRequestSchema, { rank: 1 })),
);

let store: SnapshotStore;
let pair: LanePair;
let fastSession: http2.ClientHttp2Session;
let connectSession: http2.ClientHttp2Session;

beforeAll(async () => {
  store = new SnapshotStore();
  store.swap(await snapshotOf(BOARD, 1_700_000_321n));
  pair = await startLanePair(store);
  ({ fastSession, connectSession } = pair);
});

afterAll(() => pair.close());

const int32 = fc.oneof(
  fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }),
  fc.integer({ min: -2, max: 35 }),
);
const message = fc.oneof(
  int32.map((rank) => ({
    rpc: "GetByRank",
    bytes: toBinary(GetByRankRequestSchema, create(GetByRankRequestSchema, { rank })),
  })),
  fc
    .oneof(
      fc.string({ maxLength: 12 }),
      fc.constantFrom("", "ZOË", "zoë", "USER3", "x".repeat(300)),
    )
    .map((username) => ({
      rpc: "GetByUsername",
      bytes: toBinary(GetByUsernameRequestSchema, create(GetByUsernameRequestSchema, { username })),
    })),
  fc.record({ offset: int32, limit: int32 }).map((fields) => ({
    rpc: "ListScoreboard",
    bytes: toBinary(ListScoreboardRequestSchema, create(ListScoreboardRequestSchema, fields)),
  })),
  fc.record({
    rpc: fc.constantFrom("GetByRank", "GetByUsername", "ListScoreboard"),
    bytes: fc.uint8Array({ maxLength: 24 }),
  }),
  // Near the shapes the lane reads without protobuf-es: non-minimal and
  // overlong varints, int32's edges, lengths that do not match, other bytes.
  fc.record({
    rpc: fc.constantFrom("GetByRank", "GetByUsername"),
    bytes: fc
      .constantFrom(
        [0x08, 0x00],
        [0x08, 0x80, 0x00],
        [0x08, 0x81, 0x00],
        [0x08, 0xff, 0xff, 0xff, 0xff, 0x07],
        [0x08, 0x80, 0x80, 0x80, 0x80, 0x08],
        [0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01],
        [0x08, 0x80],
        [0x08, 0x01, 0x08, 0x02],
        [0x08, 0x01, 0x10, 0x02],
        [0x0a, 0x00],
        [0x0a, 0x02, 0x41],
        [0x0a, 0x01, 0x41, 0x42],
        [0x0a, 0x02, 0xc3, 0xab],
        [0x0a, 0x01, 0xff],
        [0x0a, 0x05, 0x55, 0x53, 0x45, 0x52, 0x33],
        [0x0a, 0x01, 0x00],
      )
      .map((bytes) => Uint8Array.from(bytes)),
  }),
);

const call = fc.record({
  message,
  type: fc.constantFrom("application/grpc", "application/grpc+proto"),
  timeout: fc.constantFrom(undefined, "5S", "100m"),
  framing: fc.constantFrom(
    "ok",
    "ok",
    "ok",
    "short",
    "long",
    "compressed",
    "twice",
    "empty",
    "raw",
  ),
});

function body(bytes: Uint8Array, framing: string): Buffer {
  switch (framing) {
    case "short":
      return envelope(bytes, 0, bytes.length + 3);
    case "long":
      return Buffer.concat([envelope(bytes), Buffer.from([1, 2])]);
    case "compressed":
      return envelope(bytes, 1);
    case "twice":
      return Buffer.concat([envelope(bytes), envelope(bytes)]);
    case "empty":
      return Buffer.alloc(0);
    case "raw":
      return Buffer.from(bytes.subarray(0, 4));
    default:
      return envelope(bytes);
  }
}

/** What a client can see of an answer, but the Date header. */
function visible(answer: RawAnswer) {
  const { date: _date, ...headers } = answer.headers;
  return {
    status: answer.status,
    headers,
    trailers: answer.trailers,
    body: answer.body.toString("hex"),
  };
}

describe("the gRPC fast lane", () => {
  it(`answers ${RUNS} generated calls exactly as connect-es does`, async () => {
    await fc.assert(
      fc.asyncProperty(call, async ({ message: m, type, timeout, framing }) => {
        const request = {
          method: "POST" as const,
          path: PATH + m.rpc,
          headers: {
            "content-type": type,
            te: "trailers",
            ...(timeout === undefined ? {} : { "grpc-timeout": timeout }),
          },
          body: body(m.bytes, framing),
        };
        const [mine, theirs] = await Promise.all([
          rawH2(fastSession, request),
          rawH2(connectSession, request),
        ]);
        expect(visible(mine)).toEqual(visible(theirs));
        expect(mine.trailers["grpc-status"]).toMatch(/^\d+$/);
      }),
      { seed: SEED, numRuns: RUNS },
    );
  }, 60_000);

  it("takes plain gRPC calls and leaves compressed calls, bad timeouts and other protocols", async () => {
    // A server with the lane alone: what it does not take is answered 404.
    await withLaneAlone(store, createGrpcFastLane, async (session) => {
      const ask = (headers: Record<string, string>) =>
        rawH2(session, {
          method: "POST",
          path: `${PATH}GetByRank`,
          headers: { te: "trailers", ...headers },
          body: rankOne,
        });
      for (const type of ["application/grpc", "application/grpc+proto"]) {
        const taken = await ask({ "content-type": type, "grpc-timeout": "1S" });
        expect(taken.trailers["grpc-status"]).toBe("0");
      }
      const leftAlone: Record<string, string>[] = [
        { "content-type": "application/grpc", "grpc-encoding": "gzip" },
        { "content-type": "application/grpc", "grpc-timeout": "soon" },
        { "content-type": "application/grpc-web+proto" },
        { "content-type": "application/proto" },
        { "content-type": "application/grpc+json" },
        { "content-type": "application/grpc", origin: "https://example.com" },
      ];
      for (const left of leftAlone) {
        expect((await ask(left)).status).toBe(404);
      }
    });
  });

  it("dates its answers as Node does, with the current second", async () => {
    await withLaneAlone(store, createGrpcFastLane, async (session) => {
      for (let i = 0; i < 3; i++) {
        const before = Math.floor(Date.now() / 1000) * 1000;
        const answer = await rawH2(session, {
          method: "POST",
          path: `${PATH}GetByRank`,
          headers: { te: "trailers", "content-type": "application/grpc" },
          body: rankOne,
        });
        const after = Date.now();
        expect(answer.trailers["grpc-status"]).toBe("0");
        const date = answer.headers.date ?? "";
        // RFC 9110's IMF-fixdate, as Node's own Date header (toUTCString).
        expect(date).toMatch(/^[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT$/);
        expect(Date.parse(date)).toBeGreaterThanOrEqual(before);
        expect(Date.parse(date)).toBeLessThanOrEqual(after);
        expect(Object.keys(answer.headers).sort()).toEqual(["content-type", "date"]);
        await sleep(600);
      }
    });
  });

  it("makes its headers once a second, and again when the clock steps back", () => {
    const t = Date.UTC(2026, 10, 28, 12, 0, 0);
    const first = datedResponseHeaders(t);
    expect(first).toEqual({
      ":status": 200,
      "content-type": "application/grpc+proto",
      date: "Sat, 28 Nov 2026 12:00:00 GMT",
    });
    expect(datedResponseHeaders(t + 999)).toBe(first);
    expect(datedResponseHeaders(t + 1000).date).toBe("Sat, 28 Nov 2026 12:00:01 GMT");
    expect(datedResponseHeaders(t - 5000).date).toBe("Sat, 28 Nov 2026 11:59:55 GMT");
  });

  it("encodes a page too long for the entry cache exactly as connect-es does", async () => {
    const big = new SnapshotStore();
    big.swap(await snapshotOf(rows(1500), 1_700_000_999n));
    const [withLane, without] = await Promise.all([
      startServer(big),
      startServer(big, { grpcFastLane: false }),
    ]);
    const [a, b] = [http2.connect(withLane.baseUrl), http2.connect(without.baseUrl)];
    try {
      const request = {
        method: "POST" as const,
        path: `${PATH}ListScoreboard`,
        headers: { "content-type": "application/grpc", te: "trailers" },
        body: envelope(
          toBinary(ListScoreboardRequestSchema, create(ListScoreboardRequestSchema, { offset: 7 })),
        ),
      };
      for (let i = 0; i < 2; i++) {
        const [mine, theirs] = await Promise.all([rawH2(a, request), rawH2(b, request)]);
        expect(mine.trailers["grpc-status"]).toBe("0");
        expect(mine.body.length).toBeGreaterThan(1493 * 20);
        expect(visible(mine)).toEqual(visible(theirs));
      }
    } finally {
      a.close();
      b.close();
      await Promise.all([withLane.shutdown(), without.shutdown()]);
    }
  });

  it("sends a bad timeout on to connect-es, which refuses it", async () => {
    const badTimeout = await rawH2(fastSession, {
      method: "POST",
      path: `${PATH}GetByRank`,
      headers: { "content-type": "application/grpc", "grpc-timeout": "soon", te: "trailers" },
      body: rankOne,
    });
    expect(badTimeout.trailers).toMatchObject({ "grpc-status": "3" });
    expect(decodeURIComponent(badTimeout.trailers["grpc-message"] ?? "")).toBe(
      "protocol error: invalid grpc timeout value: soon",
    );
  });
});
