import http2 from "node:http2";
import { type DescMessage, type MessageShape, fromBinary, toBinary } from "@bufbuild/protobuf";
import { BinaryWriter, WireType } from "@bufbuild/protobuf/wire";
import { Code, ConnectError } from "@connectrpc/connect";
import {
  type Entry,
  EntrySchema,
  GetByRankRequestSchema,
  GetByUsernameRequestSchema,
  ListScoreboardRequestSchema,
} from "@repo/proto-gen/scoreboard/v1";
import { type RouteDeps, codeName } from "./connect";
import { type EntryAnswer, type PageAnswer, scoreboardCalls } from "./service";
import type { Snapshot } from "./snapshot/snapshot";

/** Largest request message read, on every path (connect-es's `readMaxBytes`): requests are a few bytes. */
export const READ_MAX_BYTES = 64 * 1024;
const PATH = "/scoreboard.v1.ScoreboardService/";
const RESPONSE_HEADERS = { ":status": 200, "content-type": "application/grpc+proto" };
const OK_TRAILERS = { "grpc-status": "0" };
/** gRPC's timeout header: up to 8 digits and a unit (PROTOCOL-HTTP2.md). */
const GRPC_TIMEOUT = /^\d{1,8}[HMSmun]$/;

/** One method: how to read its request and answer it. */
interface Method<I extends DescMessage> {
  name: string;
  input: I;
  answer: (deps: RouteDeps, request: MessageShape<I>) => Uint8Array;
}

function method<I extends DescMessage>(m: Method<I>): Method<DescMessage> {
  return m;
}

/** Encoded entries by rank, kept as long as their (immutable) snapshot: most calls then encode nothing. */
const encodings = new WeakMap<Snapshot, (Uint8Array | undefined)[]>();
/**
 * Pages longer than this are encoded without filling the cache: one `limit = 0`
 * call on a large board would otherwise keep an encoding of every entry.
 */
const CACHED_PAGE_MAX = 1000;

function encodeEntry(snapshot: Snapshot, entry: Entry, keep = true): Uint8Array {
  let cache = encodings.get(snapshot);
  if (cache === undefined) {
    cache = [];
    encodings.set(snapshot, cache);
  }
  let bytes = cache[entry.rank - 1];
  if (bytes === undefined) {
    bytes = toBinary(EntrySchema, entry);
    if (keep) cache[entry.rank - 1] = bytes;
  }
  return bytes;
}

/** A ListScoreboardResponse, from the entries' cached encodings; byte for byte what toBinary writes. */
function encodePage({ snapshot, entries }: PageAnswer): Uint8Array {
  const writer = new BinaryWriter();
  const keep = entries.length <= CACHED_PAGE_MAX;
  for (const entry of entries)
    writer.tag(1, WireType.LengthDelimited).bytes(encodeEntry(snapshot, entry, keep));
  if (snapshot.total !== 0) writer.tag(2, WireType.Varint).int32(snapshot.total);
  if (snapshot.fetchedAt !== 0n) writer.tag(3, WireType.Varint).int64(snapshot.fetchedAt);
  return writer.finish();
}

const entryOf = ({ snapshot, entry }: EntryAnswer) => encodeEntry(snapshot, entry);

const METHODS = new Map(
  [
    method({
      name: "ListScoreboard",
      input: ListScoreboardRequestSchema,
      answer: ({ store }, request) => encodePage(scoreboardCalls.listScoreboard(store, request)),
    }),
    method({
      name: "GetByRank",
      input: GetByRankRequestSchema,
      answer: ({ store }, request) => entryOf(scoreboardCalls.getByRank(store, request)),
    }),
    method({
      name: "GetByUsername",
      input: GetByUsernameRequestSchema,
      answer: ({ store }, request) => entryOf(scoreboardCalls.getByUsername(store, request)),
    }),
  ].map((m) => [PATH + m.name, m]),
);

/**
 * gRPC over HTTP/2 for the scoreboard's three unary calls, on the raw stream:
 * the calls nearly every client makes, without connect-es's general machinery
 * (Headers objects, async iterables, per-call serializers), with encoded
 * entries cached per snapshot. The answers, status codes and messages are
 * connect-es's own (the test suite runs every case through both lanes).
 * Returns false, touching nothing, for anything else: other protocols, HTTP/1.1,
 * compressed or timed calls it cannot judge, health and reflection.
 */
export function createGrpcFastLane(
  deps: RouteDeps,
): (stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders) => boolean {
  // Metric children bound once: no label hashing per call.
  const bound = new Map(
    [...METHODS.values()].map((m) => [
      m,
      {
        latency: deps.metrics.latency.labels({ method: m.name }),
        ok: deps.metrics.requests.labels({ method: m.name, code: "OK" }),
      },
    ]),
  );
  return (stream, headers) => {
    const path = headers[":path"];
    const m = path === undefined ? undefined : METHODS.get(path);
    const type = headers["content-type"];
    const encoding = headers["grpc-encoding"];
    const timeout = headers["grpc-timeout"];
    const metrics = m === undefined ? undefined : bound.get(m);
    if (
      m === undefined ||
      metrics === undefined ||
      headers[":method"] !== "POST" ||
      (type !== "application/grpc" && type !== "application/grpc+proto") ||
      (encoding !== undefined && encoding !== "identity") ||
      (timeout !== undefined && (typeof timeout !== "string" || !GRPC_TIMEOUT.test(timeout))) ||
      headers.origin !== undefined // browsers: CORS is the general path's
    )
      return false;
    const stopTimer = metrics.latency.startTimer();
    const chunks: Buffer[] = [];
    let size = 0;
    const answer = (): void => {
      stream.off("data", onData);
      stream.off("end", answer);
      let reply: Uint8Array | undefined;
      let failure: ConnectError | undefined;
      try {
        const body =
          chunks.length === 1 && chunks[0] !== undefined ? chunks[0] : Buffer.concat(chunks);
        reply = m.answer(deps, readUnary(m.input, body.subarray(0, ENOUGH_BYTES)));
      } catch (error) {
        failure = error instanceof ConnectError ? error : undefined;
        if (failure === undefined) {
          deps.logger.error({ err: error, method: m.name }, "unexpected error in a call");
          failure = new ConnectError("internal error", Code.Internal);
        }
      }
      if (failure === undefined) metrics.ok.inc();
      else deps.metrics.requests.inc({ method: m.name, code: codeName(failure.code) });
      stopTimer();
      send(stream, reply, failure);
    };
    const onData = (chunk: Buffer): void => {
      chunks.push(chunk);
      size += chunk.length;
      if (size > ENOUGH_BYTES) answer(); // the answer is known; a body that never ends holds nothing
    };
    stream.on("data", onData);
    stream.on("end", answer);
    return true;
  };
}

/**
 * Bytes that decide every unary call: two whole envelopes of the largest size.
 * Past them, connect-es has already refused the call (extra message).
 */
const ENOUGH_BYTES = 2 * (5 + READ_MAX_BYTES);

/**
 * The one message of a unary call, or the error connect-es gives for what is
 * wrong with the body, in connect-es's order: the first envelope is split,
 * decompressed and parsed before a second one is looked for.
 */
function readUnary<I extends DescMessage>(input: I, body: Buffer): MessageShape<I> {
  let at = 0;
  /** The next whole envelope's payload; undefined at the end, or where connect-es stops without an error. */
  const next = (): Buffer | undefined => {
    const rest = body.length - at;
    if (rest === 0) return undefined;
    if (rest < 5)
      throw new ConnectError("protocol error: incomplete envelope", Code.InvalidArgument);
    const flags = body[at] ?? 0;
    const length = body.readUInt32BE(at + 1);
    if (length > READ_MAX_BYTES) {
      throw new ConnectError(
        `message size ${length} is larger than configured readMaxBytes ${READ_MAX_BYTES}`,
        Code.ResourceExhausted,
      );
    }
    if (rest - 5 < length) {
      if (rest === 5) return undefined; // a header and no payload yet: connect-es sees no message
      throw new ConnectError("protocol error: incomplete envelope", Code.InvalidArgument);
    }
    at += 5 + length;
    if (flags & 0b1) {
      throw new ConnectError(
        "received compressed envelope, but do not know how to decompress",
        Code.InvalidArgument,
      );
    }
    return body.subarray(at - length, at);
  };
  const decode = (payload: Buffer): MessageShape<I> => {
    try {
      return fromBinary(input, payload);
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      throw new ConnectError(
        `cannot decode message ${input.typeName} from binary: ${reason}`,
        Code.InvalidArgument,
      );
    }
  };
  const first = next();
  if (first === undefined) {
    throw new ConnectError(
      "protocol error: missing input message for unary method",
      Code.Unimplemented,
    );
  }
  const message = decode(first);
  const second = next();
  if (second !== undefined) {
    decode(second);
    throw new ConnectError(
      "protocol error: received extra input message for unary method",
      Code.Unimplemented,
    );
  }
  return message;
}

/** Writes the reply (or the error) and the trailers that end a gRPC call. */
function send(
  stream: http2.ServerHttp2Stream,
  reply: Uint8Array | undefined,
  failure: ConnectError | undefined,
): void {
  if (stream.destroyed || stream.closed) return;
  const trailers =
    failure === undefined
      ? OK_TRAILERS
      : {
          "grpc-status": String(failure.code),
          "grpc-message": encodeURIComponent(failure.rawMessage.toWellFormed()),
        };
  stream.respond(RESPONSE_HEADERS, { waitForTrailers: true });
  stream.once("wantTrailers", () => {
    stream.sendTrailers(trailers);
  });
  if (reply === undefined) {
    stream.end();
    return;
  }
  const frame = Buffer.allocUnsafe(5 + reply.length);
  frame[0] = 0;
  frame.writeUInt32BE(reply.length, 1);
  frame.set(reply, 5);
  stream.end(frame);
}
