import http from "node:http";
import http2 from "node:http2";
import { create, fromBinary, toBinary, toJsonString } from "@bufbuild/protobuf";
import { BinaryWriter, WireType } from "@bufbuild/protobuf/wire";
import fc from "fast-check";
import {
  EntrySchema,
  GetByRankRequestSchema,
  GetByUsernameRequestSchema,
  ListScoreboardRequestSchema,
  ListScoreboardResponseSchema,
} from "@repo/proto-gen/scoreboard/v1";
import type { Snapshot } from "../src/snapshot/snapshot";
import { SnapshotStore } from "../src/snapshot/store";
import { type RawAnswer, type RawRequest, envelope, frames, rawH1, rawH2 } from "./raw-client";
import { type Row, type Running, rows, snapshotOf, startServer } from "./helpers";

/**
 * Generated hostile calls (fast-check, fixed seed and run count so CI is
 * repeatable; a failure prints its seed and path): the three RPCs over gRPC,
 * gRPC-Web and Connect (POST and GET, binary and JSON, HTTP/2 and HTTP/1.1),
 * with hostile field values, unknown and repeated fields, malformed protobuf
 * and JSON, broken framing and wrong content types. A well-formed call gets
 * exactly the contract's answer; anything else gets a client error, never
 * INTERNAL, UNKNOWN or an HTTP 5xx; and the served snapshot never changes.
 */
const SEED = 20_261_122;
const RUNS = 1500;

const BOARD: Row[] = [
  ...rows(40),
  { rank: 41, username: "Alice", profile_path: "/u/A", country: "FR", grade: "S", score: 5 },
  { rank: 42, username: "alice", profile_path: "/u/a", country: "FR", grade: "B", score: 4 },
  { rank: 43, username: "ＢＯＢ", profile_path: "/u/b", country: "JP", grade: "C", score: 3 },
];
const PATH = "/scoreboard.v1.ScoreboardService/";
/** gRPC status codes and Connect codes that would mean the server, not the caller, failed. */
const SERVER_FAULT_GRPC = new Set([2, 13, 14, 15]);
const SERVER_FAULT_CONNECT = new Set(["unknown", "internal", "unavailable", "data_loss"]);

type Rpc = "ListScoreboard" | "GetByRank" | "GetByUsername";
type Protocol = "grpc" | "grpc-web" | "connect" | "connect-get";
type Fields = Record<string, number | string>;

/** The contract's answer to a well-formed call, from the board rows alone. */
type Expected = { code: "invalid_argument" | "not_found" } | { rows: Row[] } | { row: Row };

function fold(name: string): string {
  return name.normalize("NFKC").toLowerCase();
}

function expected(rpc: Rpc, fields: Fields): Expected {
  const int = (name: string) => (fields[name] as number | undefined) ?? 0;
  if (rpc === "ListScoreboard") {
    const [offset, limit] = [int("offset"), int("limit")];
    if (offset < 0 || limit < 0) return { code: "invalid_argument" };
    return { rows: BOARD.slice(offset, limit === 0 ? undefined : offset + limit) };
  }
  if (rpc === "GetByRank") {
    const rank = int("rank");
    if (rank < 1) return { code: "invalid_argument" };
    const row = BOARD[rank - 1];
    return row === undefined ? { code: "not_found" } : { row };
  }
  const username = (fields.username as string | undefined) ?? "";
  if (username === "") return { code: "invalid_argument" };
  const row =
    BOARD.find((r) => r.username === username) ??
    BOARD.find((r) => fold(r.username) === fold(username));
  return row === undefined ? { code: "not_found" } : { row };
}

const SCHEMAS = {
  ListScoreboard: ListScoreboardRequestSchema,
  GetByRank: GetByRankRequestSchema,
  GetByUsername: GetByUsernameRequestSchema,
} as const;

/** A request message as it travels: binary, or JSON text. */
function encodeMessage(rpc: Rpc, fields: Fields, json: boolean): Uint8Array {
  const schema = SCHEMAS[rpc];
  const message = create(schema as typeof ListScoreboardRequestSchema, fields);
  return json
    ? Buffer.from(toJsonString(schema as typeof ListScoreboardRequestSchema, message))
    : toBinary(schema as typeof ListScoreboardRequestSchema, message);
}

const int32 = fc.oneof(
  fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }),
  fc.integer({ min: -3, max: 50 }),
  fc.constantFrom(0, 1, 43, 44, -1, 2 ** 31 - 1, -(2 ** 31)),
);
const hostileString = fc.oneof(
  fc.string({ maxLength: 30 }),
  fc.string({ unit: "binary", maxLength: 30 }),
  fc.constantFrom(
    "",
    "\u0000",
    "alice",
    "ALICE",
    "BOB",
    "user7",
    "User40",
    "\ud800",
    "x".repeat(5000),
  ),
);

/** Well-formed values for the RPC's fields, some of them left out. */
const fieldsOf = (rpc: Rpc): fc.Arbitrary<Fields> =>
  rpc === "GetByUsername"
    ? fc.record({ username: hostileString }, { requiredKeys: [] })
    : rpc === "GetByRank"
      ? fc.record({ rank: int32 }, { requiredKeys: [] })
      : fc.record({ offset: int32, limit: int32 }, { requiredKeys: [] });

/** Bytes of an unknown field of any wire type; proto3 parsers skip them. */
const unknownField = fc
  .record({
    field: fc.integer({ min: 3, max: 536_870_911 }),
    kind: fc.constantFrom("varint", "fixed32", "fixed64", "bytes"),
    value: fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }),
    bytes: fc.uint8Array({ maxLength: 20 }),
  })
  .map(({ field, kind, value, bytes }) => {
    const writer = new BinaryWriter();
    if (kind === "varint") writer.tag(field, WireType.Varint).uint64(value);
    else if (kind === "fixed32")
      writer.tag(field, WireType.Bit32).fixed32(Number(value % 2n ** 32n));
    else if (kind === "fixed64") writer.tag(field, WireType.Bit64).fixed64(value);
    else writer.tag(field, WireType.LengthDelimited).bytes(bytes);
    return writer.finish();
  });

/** Bytes no parser should accept as the message, or only by luck. */
const garbage = fc.oneof(
  fc.uint8Array({ maxLength: 64 }),
  fc.constantFrom(
    Buffer.from("true"), // wire type 4 (end group) at field 14
    Buffer.from([0x08]), // a tag with no value
    Buffer.from([0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]), // 11-byte varint
    Buffer.from([0x0a, 0x05, 0x61]), // a string shorter than its length
    Buffer.from([0x12, 0x02, 0xc3, 0x28]), // invalid UTF-8 in a string
    Buffer.from([0x0b]), // start group
    Buffer.from('{"rank": {}}'),
    Buffer.from("[".repeat(5000)),
  ),
  fc.json({ maxDepth: 4 }).map((text) => Buffer.from(text)),
  fc.string({ unit: "binary", maxLength: 40 }).map((text) => Buffer.from(text)),
);

/** One call as generated: what it asks, how it is framed, and whether it is well formed. */
interface Call {
  rpc: Rpc | "Unknown";
  protocol: Protocol;
  h2: boolean;
  fields: Fields;
  /** `undefined`: the message is the encoding of `fields` (plus skippable extras). */
  body: Uint8Array | undefined;
  extras: Uint8Array[];
  json: boolean;
  contentType: string | undefined;
  framing: "ok" | "short" | "long" | "compressed" | "twice" | "none";
}

const call: fc.Arbitrary<Call> = fc
  .constantFrom<Rpc>("ListScoreboard", "GetByRank", "GetByUsername")
  .chain((rpc) =>
    fc.record({
      rpc: fc.oneof(
        { weight: 20, arbitrary: fc.constant<Call["rpc"]>(rpc) },
        fc.constant("Unknown" as const),
      ),
      protocol: fc.constantFrom<Protocol>("grpc", "grpc-web", "connect", "connect-get"),
      h2: fc.boolean(),
      fields: fieldsOf(rpc),
      body: fc.oneof({ weight: 3, arbitrary: fc.constant(undefined) }, garbage),
      extras: fc.array(unknownField, { maxLength: 3 }),
      json: fc.boolean(),
      contentType: fc.oneof(
        { weight: 6, arbitrary: fc.constant(undefined) },
        fc.constantFrom(
          "",
          "text/plain",
          "application/x-www-form-urlencoded",
          "application/grpc+json",
          "application/grpc+xml",
          "application/json; charset=utf-16",
          "application/proto; charset=utf-8",
          "application/octet-stream",
        ),
      ),
      framing: fc.oneof(
        { weight: 8, arbitrary: fc.constant<Call["framing"]>("ok") },
        fc.constantFrom<Call["framing"]>("short", "long", "compressed", "twice", "none"),
      ),
    }),
  );

/** Is the call well formed, so that the contract fixes its exact answer? */
function wellFormed(c: Call): boolean {
  if (c.rpc === "Unknown" || c.body !== undefined || c.contentType !== undefined) return false;
  if (c.protocol === "grpc" && !c.h2) return false; // gRPC needs HTTP/2
  if (c.json && c.extras.length > 0) return false; // unknown fields are binary here
  return c.framing === "ok" || !c.protocol.startsWith("grpc");
}

function toRequest(c: Call): RawRequest {
  const rpc = c.rpc === "Unknown" ? "GetByRank" : c.rpc;
  const message =
    c.body ?? Buffer.concat([encodeMessage(rpc, c.fields, c.json), ...(c.json ? [] : c.extras)]);
  const codec = c.json ? "json" : "proto";
  const path = PATH + c.rpc;
  if (c.protocol === "connect-get") {
    const query = new URLSearchParams({
      connect: "v1",
      encoding: codec,
      message: Buffer.from(message).toString("base64url"),
      base64: "1",
    });
    return { method: "GET", path: `${path}?${query.toString()}`, headers: {} };
  }
  if (c.protocol === "connect") {
    return {
      method: "POST",
      path,
      headers: {
        "content-type": c.contentType ?? `application/${codec}`,
        "connect-protocol-version": "1",
      },
      body: message,
    };
  }
  const framed = {
    ok: () => envelope(message),
    short: () => envelope(message, 0, Math.max(0, message.length - 1)),
    long: () => envelope(message, 0, message.length + 7),
    compressed: () => envelope(message, 1),
    twice: () => Buffer.concat([envelope(message), envelope(message)]),
    none: () => Buffer.from(message),
  }[c.framing]();
  return {
    method: "POST",
    path,
    headers: {
      "content-type": c.contentType ?? `application/${c.protocol}+${codec}`,
      ...(c.protocol === "grpc" ? { te: "trailers" } : {}),
    },
    body: framed,
  };
}

/** The outcome of a call, whatever its protocol: a status code name and the reply's bytes. */
interface Outcome {
  code: string;
  message: string;
  reply?: Buffer | undefined;
  httpStatus: number;
}

const GRPC_CODES = [
  "ok",
  "canceled",
  "unknown",
  "invalid_argument",
  "deadline_exceeded",
  "not_found",
  "already_exists",
  "permission_denied",
  "resource_exhausted",
  "failed_precondition",
  "aborted",
  "out_of_range",
  "unimplemented",
  "internal",
  "unavailable",
  "data_loss",
  "unauthenticated",
];

function outcome(c: Call, answer: RawAnswer): Outcome {
  const base = { httpStatus: answer.status };
  if (c.protocol.startsWith("grpc") && answer.status === 200) {
    let trailers = { ...answer.headers, ...answer.trailers };
    const parts = frames(answer.body);
    const trailerFrame = parts.find(([flags]) => (flags & 0x80) !== 0);
    if (trailerFrame !== undefined) {
      trailers = Object.fromEntries(
        trailerFrame[1]
          .toString()
          .split("\r\n")
          .filter((line) => line.includes(":"))
          .map((line) => [
            line.slice(0, line.indexOf(":")).toLowerCase(),
            line.slice(line.indexOf(":") + 1).trim(),
          ]),
      );
    }
    const status = Number(trailers["grpc-status"]);
    return {
      ...base,
      code: GRPC_CODES[status] ?? `grpc-status ${trailers["grpc-status"] ?? "missing"}`,
      message: decodeURIComponent(trailers["grpc-message"] ?? ""),
      reply: parts.find(([flags]) => flags === 0)?.[1],
    };
  }
  if (answer.status === 200) return { ...base, code: "ok", message: "", reply: answer.body };
  const type = answer.headers["content-type"] ?? "";
  if (type.startsWith("application/json")) {
    const error = JSON.parse(answer.body.toString()) as { code?: string; message?: string };
    return { ...base, code: error.code ?? "missing", message: error.message ?? "" };
  }
  return { ...base, code: `http ${answer.status}`, message: answer.body.toString() };
}

function decodeReply(c: Call, reply: Buffer): { rows: unknown[] } | { row: unknown } {
  const entry = (e: {
    rank: number;
    username: string;
    profilePath: string;
    country: string;
    grade: string;
    score: number;
  }) => ({
    rank: e.rank,
    username: e.username,
    profile_path: e.profilePath,
    country: e.country,
    grade: e.grade,
    score: e.score,
  });
  if (c.rpc === "ListScoreboard") {
    const page = c.json
      ? (JSON.parse(reply.toString()) as { entries?: Parameters<typeof entry>[0][] })
      : fromBinary(ListScoreboardResponseSchema, reply);
    return { rows: (page.entries ?? []).map((e) => entry({ ...create(EntrySchema), ...e })) };
  }
  const one = c.json
    ? { ...create(EntrySchema), ...(JSON.parse(reply.toString()) as object) }
    : fromBinary(EntrySchema, reply);
  return { row: entry(one) };
}

let running: Running;
let snapshot: Snapshot | undefined;
let session: http2.ClientHttp2Session;
let agent: http.Agent;
const seen = { wellFormed: 0, refused: 0, byProtocol: new Map<string, number>() };

beforeAll(async () => {
  const store = new SnapshotStore();
  store.swap(await snapshotOf(BOARD, 1_700_000_000n));
  snapshot = store.current();
  running = await startServer(store);
  session = http2.connect(running.baseUrl);
  agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
});

afterAll(async () => {
  session.close();
  agent.destroy();
  await running.shutdown();
});

/** Sends one call; an answer that takes over 5 s counts as a hang and fails the property. */
async function send(request: RawRequest, h2: boolean): Promise<RawAnswer> {
  let timer: NodeJS.Timeout | undefined;
  const hang = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error("no answer within 5 s")), 5000);
  });
  try {
    return await Promise.race([
      h2 ? rawH2(session, request) : rawH1(agent, running.port, request),
      hang,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

describe("generated hostile calls", () => {
  it(`answer ${RUNS} calls with the contract's answer or a client error, never a server fault`, async () => {
    await fc.assert(
      fc.asyncProperty(call, async (c) => {
        const answer = await send(toRequest(c), c.h2);
        const got = outcome(c, answer);
        const label = `${c.protocol} over ${c.h2 ? "h2" : "HTTP/1.1"}`;
        seen.byProtocol.set(label, (seen.byProtocol.get(label) ?? 0) + 1);

        expect(answer.status).toBeLessThan(500);
        expect(SERVER_FAULT_GRPC.has(GRPC_CODES.indexOf(got.code))).toBe(false);
        expect(SERVER_FAULT_CONNECT.has(got.code)).toBe(false);
        expect(got.message).not.toMatch(/\n\s+at |node_modules|TypeError|RangeError/);

        if (wellFormed(c)) {
          seen.wellFormed += 1;
          const want = expected(c.rpc as Rpc, c.fields);
          if ("code" in want) expect(got.code).toBe(want.code);
          else {
            expect(got.code).toBe("ok");
            expect(decodeReply(c, got.reply ?? Buffer.alloc(0))).toEqual(want);
          }
        } else if (got.code !== "ok") seen.refused += 1;

        // Nothing a caller sends changes what is served.
        expect(running.store.current()).toBe(snapshot);
      }),
      { seed: SEED, numRuns: RUNS },
    );
    // The generator must exercise both halves: exact answers and refusals, on every protocol.
    expect(seen.wellFormed).toBeGreaterThan(RUNS / 5);
    expect(seen.refused).toBeGreaterThan(RUNS / 5);
    expect(seen.byProtocol.size).toBe(8);
  }, 120_000);
});

describe("hostile calls at known edges", () => {
  const grpcCall = (rpc: string, message: Uint8Array, type = "application/grpc") =>
    send(
      {
        method: "POST",
        path: PATH + rpc,
        headers: { "content-type": type, te: "trailers" },
        body: envelope(message),
      },
      true,
    );

  it("refuses bytes that are not the request message with INVALID_ARGUMENT, not INTERNAL", async () => {
    const bytes = Buffer.from("true"); // field 14 with wire type 4, which proto3 cannot skip
    const connect = await send(
      {
        method: "POST",
        path: `${PATH}GetByRank`,
        headers: { "content-type": "application/proto" },
        body: bytes,
      },
      false,
    );
    expect(connect.status).toBe(400);
    expect(JSON.parse(connect.body.toString())).toEqual({
      code: "invalid_argument",
      message: expect.stringMatching(
        /^cannot decode message scoreboard\.v1\.GetByRankRequest from binary: /,
      ) as unknown,
    });
    const grpc = await grpcCall("ListScoreboard", bytes);
    expect(grpc.trailers["grpc-status"]).toBe("3");
    expect(decodeURIComponent(grpc.trailers["grpc-message"] ?? "")).toMatch(
      /^cannot decode message scoreboard\.v1\.ListScoreboardRequest from binary/,
    );
  });

  it("answers a gRPC-Web call over HTTP/1.1 whose error message echoes half a surrogate pair", async () => {
    // V8 quotes the start of bad JSON in its message and may cut a surrogate pair in two.
    const body = envelope(Buffer.from("\u{10FFFF}".repeat(20)));
    const answer = await send(
      {
        method: "POST",
        path: `${PATH}GetByUsername`,
        headers: { "content-type": "application/grpc-web+json" },
        body,
      },
      false,
    );
    const got = outcome({ protocol: "grpc-web", framing: "ok" } as Call, answer);
    expect(got.code).toBe("invalid_argument");
    expect(got.message).toMatch(
      /^cannot decode message scoreboard\.v1\.GetByUsernameRequest from JSON/,
    );
  });

  it("refuses a compressed frame without grpc-encoding as INVALID_ARGUMENT", async () => {
    const answer = await send(
      {
        method: "POST",
        path: `${PATH}GetByRank`,
        headers: { "content-type": "application/grpc", te: "trailers" },
        body: envelope(Buffer.from([0x08, 0x01]), 1),
      },
      true,
    );
    expect(answer.trailers["grpc-status"]).toBe("3");
  });

  it("reads a request of 64 KiB and refuses one byte more with RESOURCE_EXHAUSTED", async () => {
    const limit = 64 * 1024;
    const withUsername = (length: number) =>
      toBinary(
        GetByUsernameRequestSchema,
        create(GetByUsernameRequestSchema, { username: "u".repeat(length) }),
      );
    // Field tag (1 byte) and a 3-byte length prefix, then the name.
    const fits = withUsername(limit - 4);
    expect(fits.length).toBe(limit);
    const under = await grpcCall("GetByUsername", fits);
    expect(under.trailers["grpc-status"]).toBe("5"); // NOT_FOUND: read and looked up
    // The message quotes only the start of the name: a trailer is a header, and 64 KiB breaks HTTP/2 peers.
    expect(decodeURIComponent(under.trailers["grpc-message"] ?? "")).toBe(
      `username "${"u".repeat(100)}"... not found`,
    );
    const over = await grpcCall("GetByUsername", withUsername(limit - 3));
    expect(over.trailers["grpc-status"]).toBe("8");
  });

  it("answers huge and negative limits and offsets exactly", async () => {
    const list = async (offset: number, limit: number) =>
      outcome(
        { protocol: "grpc", framing: "ok" } as Call,
        await grpcCall(
          "ListScoreboard",
          toBinary(
            ListScoreboardRequestSchema,
            create(ListScoreboardRequestSchema, { offset, limit }),
          ),
        ),
      );
    expect((await list(0, 2 ** 31 - 1)).code).toBe("ok");
    expect(
      fromBinary(
        ListScoreboardResponseSchema,
        (await list(0, 2 ** 31 - 1)).reply ?? Buffer.alloc(0),
      ).entries,
    ).toHaveLength(BOARD.length);
    expect(await list(2 ** 31 - 1, 1)).toMatchObject({ code: "ok" });
    expect(await list(-(2 ** 31), 1)).toMatchObject({
      code: "invalid_argument",
      message: "offset must not be negative",
    });
    expect(await list(0, -1)).toMatchObject({
      code: "invalid_argument",
      message: "limit must not be negative",
    });
  });
});
