import http2 from "node:http2";
import {
  type DescMessage,
  type DescMethod,
  type MessageShape,
  fromBinary,
} from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { ScoreboardService } from "@repo/proto-gen/scoreboard/v1";
import type { CallRecorder } from "./calls";
import type { RouteDeps } from "./connect";
import { cachedPage, encodeEntry } from "./encodings";
import { type EntryAnswer, scoreboardCalls } from "./service";

/** Largest request message read, on every path (connect-es's `readMaxBytes`): requests are a few bytes. */
export const READ_MAX_BYTES = 64 * 1024;
const RESPONSE_HEADERS = { ":status": 200, "content-type": "application/grpc+proto" };
const OK_TRAILERS = { "grpc-status": "0" };
/** gRPC's timeout header: up to 8 digits and a unit (PROTOCOL-HTTP2.md). */
const GRPC_TIMEOUT = /^\d{1,8}[HMSmun]$/;

/** One method: its descriptor, and how to answer its request. */
interface Method<I extends DescMessage> {
  desc: DescMethod & { input: I };
  answer: (deps: RouteDeps, request: MessageShape<I>) => Uint8Array;
}

function method<I extends DescMessage>(m: Method<I>): Method<DescMessage> {
  return m;
}

const entryOf = ({ snapshot, entry }: EntryAnswer) => encodeEntry(snapshot, entry);

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
      answer: ({ store }, request) => entryOf(scoreboardCalls.getByRank(store, request)),
    }),
    method({
      desc: getByUsername,
      answer: ({ store }, request) => entryOf(scoreboardCalls.getByUsername(store, request)),
    }),
  ].map((m) => [`/${ScoreboardService.typeName}/${m.desc.name}`, m]),
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
    const call = record(m.desc);
    const chunks: Buffer[] = [];
    let size = 0;
    const stopReading = (): void => {
      stream.off("data", onData);
      stream.off("end", answer);
      stream.off("close", cancelled);
    };
    const answer = (): void => {
      stopReading();
      let reply: Uint8Array | undefined;
      let failure: ConnectError | undefined;
      try {
        const body =
          chunks.length === 1 && chunks[0] !== undefined ? chunks[0] : Buffer.concat(chunks);
        reply = m.answer(deps, readUnary(m.desc.input, body.subarray(0, ENOUGH_BYTES)));
        call.ok();
      } catch (error) {
        failure = call.fail(error);
      }
      try {
        send(stream, reply, failure);
      } catch (error) {
        // A stream the client has already given up on: nothing more to say on it.
        deps.logger.debug({ err: error, method: m.desc.name }, "a gRPC answer could not be sent");
        stream.destroy();
      }
    };
    /** The stream ended (reset by the client, timed out) before its request did. */
    const cancelled = (): void => {
      stopReading();
      call.fail(new ConnectError("the call ended before its request", Code.Canceled));
    };
    const onData = (chunk: Buffer): void => {
      chunks.push(chunk);
      size += chunk.length;
      if (size > ENOUGH_BYTES) answer(); // the answer is known; a body that never ends holds nothing
    };
    stream.on("data", onData);
    stream.on("end", answer);
    stream.on("close", cancelled);
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

/** Replies from this size on are sent without copying them into one frame buffer. */
const LARGE_REPLY = 16 * 1024;

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
    if (!stream.destroyed) stream.sendTrailers(trailers);
  });
  if (reply === undefined) {
    stream.end();
    return;
  }
  const prefix = Buffer.allocUnsafe(5);
  prefix[0] = 0;
  prefix.writeUInt32BE(reply.length, 1);
  if (reply.length >= LARGE_REPLY) {
    // A large (cached) reply is written as it is, after its prefix, rather than copied.
    stream.write(prefix);
    stream.end(reply);
    return;
  }
  const frame = Buffer.allocUnsafe(5 + reply.length);
  frame.set(prefix, 0);
  frame.set(reply, 5);
  stream.end(frame);
}
