import http2 from "node:http2";
import { create, toBinary, toJsonString } from "@bufbuild/protobuf";
import fc from "fast-check";
import {
  GetByRankRequestSchema,
  GetByUsernameRequestSchema,
  ListScoreboardRequestSchema,
} from "@repo/proto-gen/scoreboard/v1";
import { createConnectGetLane } from "../src/connect-get-lane";
import { SnapshotStore } from "../src/snapshot/store";
import { type RawAnswer, rawH2 } from "./raw-client";
import { type LanePair, type Row, rows, snapshotOf, startLanePair, withLaneAlone } from "./helpers";

/**
 * The Connect GET lane against connect-es, on the same snapshot: generated GET
 * requests (well-formed and hostile queries, both encodings, with and without
 * base64, If-None-Match and Accept-Encoding) sent to a server with the lane and
 * to one without must get the very same status, headers and bytes.
 */
const SEED = 20_261_124;
const RUNS = 600;

const BOARD: Row[] = [
  ...rows(1200),
  { rank: 1201, username: "Zoë", profile_path: "/u/z", country: "", grade: "", score: -5 },
  { rank: 1202, username: "zoë", profile_path: "", country: "NL", grade: "B", score: 0 },
];
const PATH = "/scoreboard.v1.ScoreboardService/";

let store: SnapshotStore;
let pair: LanePair;
let fastSession: http2.ClientHttp2Session;
let connectSession: http2.ClientHttp2Session;

beforeAll(async () => {
  store = new SnapshotStore();
  store.swap(await snapshotOf(BOARD, 1_700_000_555n));
  pair = await startLanePair(store);
  ({ fastSession, connectSession } = pair);
});

afterAll(() => pair.close());

const int32 = fc.oneof(
  fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }),
  fc.integer({ min: -2, max: 1210 }),
);

type Rpc = "GetByRank" | "GetByUsername" | "ListScoreboard";

/** A request message in the two forms Connect GET carries: binary and JSON text. */
interface Call {
  rpc: Rpc;
  bytes: Uint8Array;
  json: string;
}

const calls: fc.Arbitrary<Call> = fc.oneof(
  int32.map((rank) => {
    const m = create(GetByRankRequestSchema, { rank });
    return {
      rpc: "GetByRank" as const,
      bytes: toBinary(GetByRankRequestSchema, m),
      json: toJsonString(GetByRankRequestSchema, m),
    };
  }),
  fc
    .oneof(
      fc.string({ maxLength: 12 }),
      fc.constantFrom("", "ZOË", "zoë", "USER3", "x".repeat(300)),
    )
    .map((username) => {
      const m = create(GetByUsernameRequestSchema, { username });
      return {
        rpc: "GetByUsername" as const,
        bytes: toBinary(GetByUsernameRequestSchema, m),
        json: toJsonString(GetByUsernameRequestSchema, m),
      };
    }),
  fc.record({ offset: int32, limit: fc.oneof(int32, fc.constant(0)) }).map((page) => {
    const m = create(ListScoreboardRequestSchema, page);
    return {
      rpc: "ListScoreboard" as const,
      bytes: toBinary(ListScoreboardRequestSchema, m),
      json: toJsonString(ListScoreboardRequestSchema, m),
    };
  }),
);

type Form = "proto-b64" | "json" | "json-b64" | "proto-raw" | "junk";

const request = fc.record({
  call: calls,
  form: fc.constantFrom<Form>(
    "proto-b64",
    "proto-b64",
    "json",
    "json",
    "json-b64",
    "proto-raw",
    "junk",
  ),
  junk: fc.string({ maxLength: 16 }),
  extra: fc.constantFrom("", "", "&connect=v1", "&compression=gzip", "&encoding=json", "&x=1"),
  ifNoneMatch: fc.constantFrom(undefined, undefined, "*", '"nope"', "current"),
  acceptEncoding: fc.constantFrom(undefined, undefined, "gzip", "identity", "br, gzip"),
  unknownMethod: fc.boolean(),
});

/** The query string of `call` in `form`. */
function query({ bytes, json }: Call, form: Form, junk: string): string {
  switch (form) {
    case "proto-b64":
      return `encoding=proto&base64=1&message=${Buffer.from(bytes).toString("base64url")}`;
    case "json":
      return `encoding=json&message=${encodeURIComponent(json)}`;
    case "json-b64":
      return `encoding=json&base64=1&message=${Buffer.from(json).toString("base64url")}`;
    case "proto-raw":
      return `encoding=proto&message=${encodeURIComponent(Buffer.from(bytes).toString("latin1"))}`;
    default:
      return `encoding=${encodeURIComponent(junk)}&message=${encodeURIComponent(junk)}`;
  }
}

/** What a client can see of an answer, but the Date header. */
function visible(answer: RawAnswer) {
  const { date: _date, ...headers } = answer.headers;
  return { status: answer.status, headers, body: answer.body.toString("hex") };
}

describe("the Connect GET lane", () => {
  it(`answers ${RUNS} generated GET requests exactly as connect-es does`, async () => {
    const etag = store.current()?.etag ?? "";
    await fc.assert(
      fc.asyncProperty(request, async (r) => {
        const rpc = r.unknownMethod ? "GetEverything" : r.call.rpc;
        const ask = {
          method: "GET" as const,
          path: `${PATH}${rpc}?${query(r.call, r.form, r.junk)}${r.extra}`,
          headers: {
            ...(r.ifNoneMatch === undefined
              ? {}
              : { "if-none-match": r.ifNoneMatch === "current" ? etag : r.ifNoneMatch }),
            ...(r.acceptEncoding === undefined ? {} : { "accept-encoding": r.acceptEncoding }),
          },
        };
        const [mine, theirs] = await Promise.all([
          rawH2(fastSession, ask),
          rawH2(connectSession, ask),
        ]);
        expect(visible(mine)).toEqual(visible(theirs));
      }),
      { seed: SEED, numRuns: RUNS },
    );
  }, 60_000);

  it("takes well-formed calls and revalidations, and leaves errors, CORS and compression", async () => {
    // A server with the lane alone: what it does not take is answered 404.
    await withLaneAlone(store, createConnectGetLane, async (session) => {
      const rank = (n: number) =>
        Buffer.from(
          toBinary(GetByRankRequestSchema, create(GetByRankRequestSchema, { rank: n })),
        ).toString("base64url");
      const ask = (path: string, headers: Record<string, string> = {}) =>
        rawH2(session, { method: "GET", path: `${PATH}${path}`, headers });
      const taken = await ask(`GetByRank?encoding=proto&base64=1&message=${rank(3)}&connect=v1`);
      expect([taken.status, taken.headers["content-type"]]).toEqual([200, "application/proto"]);
      expect(taken.headers.etag).toBe(store.current()?.etag);
      const json = await ask(
        `GetByUsername?encoding=json&message=${encodeURIComponent('{"username":"ZOË"}')}`,
      );
      expect(JSON.parse(json.body.toString())).toMatchObject({ rank: 1201, username: "Zoë" });
      const revalidated = await ask("GetByRank?encoding=proto", { "if-none-match": "*" });
      expect(revalidated.status).toBe(304);
      const full = await ask(`ListScoreboard?encoding=proto&base64=1&message=`);
      expect(full.status).toBe(200);
      expect(full.body.length).toBeGreaterThan(1200 * 20);
      const leftAlone: [string, Record<string, string>][] = [
        [`GetByRank?encoding=proto&base64=1&message=${rank(0)}`, {}], // INVALID_ARGUMENT
        [`GetByRank?encoding=proto&base64=1&message=${rank(5000)}`, {}], // NOT_FOUND
        [`GetByRank?encoding=proto&base64=1&message=${rank(3)}&compression=gzip`, {}],
        [`GetByRank?encoding=proto&base64=1&message=${rank(3)}`, { origin: "https://x.test" }],
        [`GetByRank?encoding=proto&base64=1&message=${rank(3)}`, { "connect-timeout-ms": "9" }],
        [`ListScoreboard?encoding=proto&base64=1&message=`, { "accept-encoding": "gzip" }],
        [`ListScoreboard?encoding=json&message=%7B%7D`, {}],
        [`GetByRank?encoding=xml&message=x`, {}],
      ];
      for (const [path, headers] of leftAlone) expect((await ask(path, headers)).status).toBe(404);
    });
  });

  it("dates its answers and revalidations as Node does, with the current second", async () => {
    await withLaneAlone(store, createConnectGetLane, async (session) => {
      for (const headers of [{}, { "if-none-match": "*" }] as Record<string, string>[]) {
        const before = Math.floor(Date.now() / 1000) * 1000;
        const answer = await rawH2(session, {
          method: "GET",
          path: `${PATH}ListScoreboard?encoding=proto&base64=1&message=`,
          headers,
        });
        const after = Date.now();
        expect(answer.status).toBe("if-none-match" in headers ? 304 : 200);
        const date = answer.headers.date ?? "";
        // RFC 9110's IMF-fixdate, as Node's own Date header (toUTCString).
        expect(date).toMatch(/^[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT$/);
        expect(Date.parse(date)).toBeGreaterThanOrEqual(before);
        expect(Date.parse(date)).toBeLessThanOrEqual(after);
      }
    });
  });
});
