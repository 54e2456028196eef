import http2 from "node:http2";
import {
  type DescMessage,
  type DescMethod,
  type MessageShape,
  fromBinary,
} from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import {
  GetByRankRequestSchema,
  GetByUsernameRequestSchema,
  ScoreboardService,
} from "@repo/proto-gen/scoreboard/v1";
import type { Call, CallRecorder } from "./calls";
import type { RouteDeps } from "./connect";
import { cachedPage, framedEntry } from "./encodings";
import { httpDate } from "./http-cache";
import { scoreboardCalls } from "./service";

/** Largest request message read, on every path (connect-es's `readMaxBytes`): requests are a few bytes. */
export const READ_MAX_BYTES = 64 * 1024;
/** The answer's headers, with the `date` Node would add ({@link httpDate}), in Node's place: last. */
let responseHeaders: http2.OutgoingHttpHeaders = {};

/** The answer's headers at `now` (ms since the epoch): new when the second changes, either way. */
export function datedResponseHeaders(now = Date.now()): http2.OutgoingHttpHeaders {
  const date = httpDate(now);
  if (responseHeaders.date !== date)
    responseHeaders = { ":status": 200, "content-type": "application/grpc+proto", date };
  return responseHeaders;
}
const OK_TRAILERS = { "grpc-status": "0" };
/** gRPC's timeout header: up to 8 digits and a unit (PROTOCOL-HTTP2.md). */
const GRPC_TIMEOUT = /^\d{1,8}[HMSmun]$/;

/** One method: its descriptor, and how to answer its request (a framed gRPC message). */
interface Method<I extends DescMessage> {
  desc: DescMethod & { input: I };
  answer: (deps: RouteDeps, request: MessageShape<I>) => Buffer;
  /**
   * The request read without protobuf-es, for the one shape nearly every
   * client sends; undefined for anything else, which `fromBinary` then reads
   * (so every error and edge case stays protobuf-es's own).
   */
  quick?: (payload: Buffer) => MessageShape<I> | undefined;
}

/** A request of one field 1 holding a varint that is a positive int32 (`08 xx...`), exactly. */
function quickRank(payload: Buffer): MessageShape<typeof GetByRankRequestSchema> | undefined {
  const length = payload.length;
  if (length < 2 || length > 6 || payload[0] !== 0x08) return undefined;
  let rank = 0;
  // Each byte's weight, 128 times the last (a multiplication, not a power: `**` is a runtime call).
  let weight = 1;
  for (let i = 1; i < length; i++, weight *= 0x80) {
    const byte = payload[i] ?? 0;
    rank += (byte & 0x7f) * weight;
    if (byte < 0x80) {
      // The varint must end the payload, be minimal (no trailing zero byte) and fit an int32.
      if (i !== length - 1 || (byte === 0 && i > 1) || rank > 0x7fffffff) return undefined;
      return { $typeName: GetByRankRequestSchema.typeName, rank };
    }
  }
  return undefined;
}

/** A request of one field 1 holding an ASCII string shorter than 128 bytes (`0a len bytes`), exactly. */
function quickUsername(
  payload: Buffer,
): MessageShape<typeof GetByUsernameRequestSchema> | undefined {
  const length = payload.length;
  if (length < 2 || payload[0] !== 0x0a || payload[1] !== length - 2 || length - 2 > 0x7f)
    return undefined;
  for (let i = 2; i < length; i++) if ((payload[i] ?? 0x80) >= 0x80) return undefined;
  return {
    $typeName: GetByUsernameRequestSchema.typeName,
    username: payload.toString("latin1", 2),
  };
}

function method<I extends DescMessage>(m: Method<I>): Method<DescMessage> {
  return m;
}

const { listScoreboard, getByRank, getByUsername } = ScoreboardService.method;

const METHODS = new Map(
  [
    method({
      desc: listScoreboard,
      answer: ({ store }, request) => {
        const { snapshot, start, end } = scoreboardCalls.pageRange(store, request);
        return cachedPage(snapshot, start, end);
      },
    }),
    method({
      desc: getByRank,
      quick: quickRank,
      answer: ({ store }, request) => {
        const { snapshot, rank } = scoreboardCalls.rankOfRank(store, request);
        return framedEntry(snapshot, rank);
      },
    }),
    method({
      desc: getByUsername,
      quick: quickUsername,
      answer: ({ store }, request) => {
        const { snapshot, rank } = scoreboardCalls.rankOfUsername(store, request);
        return framedEntry(snapshot, rank);
      },
    }),
  ].map((m) => [`/${ScoreboardService.typeName}/${m.desc.name}`, m]),
);

/**
 * A call on the fast lane while its request arrives: kept on its stream, so
 * that the stream's listeners are functions shared by every call rather than
 * closures made for each.
 */
class LaneCall {
  /** The request's first chunk, and the rest when there are more (usually there are not). */
  first: Buffer | undefined = undefined;
  more: Buffer[] | undefined = undefined;
  size = 0;
  /** Answered or cancelled: later events of the stream are ignored. */
  done = false;
  /** The trailers of a failed call, sent when the stream asks for them. */
  trailers: http2.OutgoingHttpHeaders | undefined = undefined;

  constructor(
    readonly deps: RouteDeps,
    readonly method: Method<DescMessage>,
    readonly call: Call,
  ) {}

  /** The request's bytes so far. */
  body(): Buffer {
    if (this.more === undefined) return this.first ?? EMPTY;
    return Buffer.concat(this.first === undefined ? this.more : [this.first, ...this.more]);
  }
}

const EMPTY = Buffer.alloc(0);
const CALL = Symbol("grpc fast lane call");
type LaneStream = http2.ServerHttp2Stream & { [CALL]?: LaneCall };

function onData(this: LaneStream, chunk: Buffer): void {
  const lane = this[CALL];
  if (lane === undefined || lane.done) return;
  if (lane.first === undefined) lane.first = chunk;
  else (lane.more ??= []).push(chunk);
  lane.size += chunk.length;
  if (lane.size > ENOUGH_BYTES) answer(this, lane); // the answer is known; a body that never ends holds nothing
}

function onEnd(this: LaneStream): void {
  const lane = this[CALL];
  if (lane !== undefined && !lane.done) answer(this, lane);
}

/** The stream ended (reset by the client, timed out) before its request did. */
function onClose(this: LaneStream): void {
  const lane = this[CALL];
  if (lane === undefined || lane.done) return;
  lane.done = true;
  lane.call.fail(new ConnectError("the call ended before its request", Code.Canceled));
}

function sendOkTrailers(this: LaneStream): void {
  if (!this.destroyed) this.sendTrailers(OK_TRAILERS);
}

function sendFailureTrailers(this: LaneStream): void {
  const trailers = this[CALL]?.trailers;
  if (!this.destroyed && trailers !== undefined) this.sendTrailers(trailers);
}

function answer(stream: LaneStream, lane: LaneCall): void {
  lane.done = true;
  let reply: Buffer | undefined;
  let failure: ConnectError | undefined;
  try {
    const body = lane.body();
    const request = readUnary(
      lane.method,
      body.length > ENOUGH_BYTES ? body.subarray(0, ENOUGH_BYTES) : body,
    );
    reply = lane.method.answer(lane.deps, request);
    lane.call.ok();
  } catch (error) {
    failure = lane.call.fail(error);
  }
  try {
    send(stream, lane, reply, failure);
  } catch (error) {
    // A stream the client has already given up on: nothing more to say on it.
    lane.deps.logger.debug(
      { err: error, method: lane.method.desc.name },
      "a gRPC answer could not be sent",
    );
    stream.destroy();
  }
}

/**
 * gRPC over HTTP/2 for the scoreboard's three unary calls, on the raw stream:
 * the calls nearly every client makes, without connect-es's general machinery
 * (Headers objects, async iterables, per-call serializers), with answers kept
 * framed per snapshot. The answers, status codes and messages are
 * connect-es's own (the test suite runs every case through both lanes).
 * Returns false, touching nothing, for anything else: other protocols, HTTP/1.1,
 * compressed or timed calls it cannot judge, health and reflection.
 */
export function createGrpcFastLane(
  deps: RouteDeps,
  record: CallRecorder,
): (stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders) => boolean {
  return (stream, headers) => {
    const path = headers[":path"];
    const m = path === undefined ? undefined : METHODS.get(path);
    const type = headers["content-type"];
    const encoding = headers["grpc-encoding"];
    const timeout = headers["grpc-timeout"];
    if (
      m === undefined ||
      headers[":method"] !== "POST" ||
      (type !== "application/grpc" && type !== "application/grpc+proto") ||
      (encoding !== undefined && encoding !== "identity") ||
      (timeout !== undefined && (typeof timeout !== "string" || !GRPC_TIMEOUT.test(timeout))) ||
      headers.origin !== undefined // browsers: CORS is the general path's
    )
      return false;
    (stream as LaneStream)[CALL] = new LaneCall(deps, m, record(m.desc));
    stream.on("data", onData);
    stream.on("end", onEnd);
    stream.on("close", onClose);
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
function readUnary<I extends DescMessage>(method: Method<I>, body: Buffer): MessageShape<I> {
  const input = method.desc.input;
  const first = envelopeAt(body, 0);
  if (first === undefined) {
    throw new ConnectError(
      "protocol error: missing input message for unary method",
      Code.Unimplemented,
    );
  }
  const end = first + envelopeLength(body, first);
  const message =
    (end === body.length ? method.quick?.(body.subarray(first + 5, end)) : undefined) ??
    decode(input, body, first);
  const second = envelopeAt(body, end);
  if (second !== undefined) {
    decode(input, body, second);
    throw new ConnectError(
      "protocol error: received extra input message for unary method",
      Code.Unimplemented,
    );
  }
  return message;
}

/** The length of the payload of the envelope at `at` (its header read already). */
function envelopeLength(body: Buffer, at: number): number {
  return 5 + body.readUInt32BE(at + 1);
}

/**
 * Where a whole envelope starts at `at`, checked as connect-es checks it;
 * undefined at the end, or where connect-es stops without an error.
 */
function envelopeAt(body: Buffer, at: number): number | undefined {
  const rest = body.length - at;
  if (rest === 0) return undefined;
  if (rest < 5) throw new ConnectError("protocol error: incomplete envelope", Code.InvalidArgument);
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
  if (flags & 0b1) {
    throw new ConnectError(
      "received compressed envelope, but do not know how to decompress",
      Code.InvalidArgument,
    );
  }
  return at;
}

/** The message of the envelope at `at`, or connect-es's error for bytes that do not decode. */
function decode<I extends DescMessage>(input: I, body: Buffer, at: number): MessageShape<I> {
  try {
    return fromBinary(input, body.subarray(at + 5, at + envelopeLength(body, at)));
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new ConnectError(
      `cannot decode message ${input.typeName} from binary: ${reason}`,
      Code.InvalidArgument,
    );
  }
}

/** Writes the reply (a framed message) or the error, and the trailers that end a gRPC call. */
function send(
  stream: LaneStream,
  lane: LaneCall,
  reply: Buffer | undefined,
  failure: ConnectError | undefined,
): void {
  if (stream.destroyed || stream.closed) return;
  stream.respond(datedResponseHeaders(), { waitForTrailers: true });
  // `on`, not `once`: a stream asks for its trailers once, and `once` wraps the
  // listener in a closure and a state object per call.
  if (failure === undefined) stream.on("wantTrailers", sendOkTrailers);
  else {
    lane.trailers = {
      "grpc-status": String(failure.code),
      "grpc-message": encodeURIComponent(failure.rawMessage.toWellFormed()),
    };
    stream.on("wantTrailers", sendFailureTrailers);
  }
  stream.end(reply);
}
