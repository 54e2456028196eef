import http2 from "node:http2";
import {
  type DescMessage,
  type DescMethod,
  type MessageShape,
  fromBinary,
  fromJsonString,
  toJsonString,
} from "@bufbuild/protobuf";
import { EntrySchema, ScoreboardService } from "@repo/proto-gen/scoreboard/v1";
import type { CallRecorder } from "./calls";
import type { RouteDeps } from "./connect";
import { cachedPage, encodeEntry } from "./encodings";
import { READ_MAX_BYTES } from "./grpc-fast-lane";
import { cacheHeaders, etagMatches, httpDate } from "./http-cache";
import { scoreboardCalls } from "./service";
import type { Snapshot } from "./snapshot/snapshot";

/** connect-es compresses answers from this size on when the client accepts it: those stay on its path. */
const COMPRESS_MIN_BYTES = 1024;

type Encoding = "proto" | "json";

/** One method on this lane: how to read its request and encode its answer. */
interface GetMethod<I extends DescMessage> {
  desc: DescMethod & { input: I };
  /** The answer's bytes in `encoding`, with the snapshot it was read from; throws the call's ConnectError. */
  answer: (
    deps: RouteDeps,
    request: MessageShape<I>,
    encoding: Encoding,
  ) => { snapshot: Snapshot; body: Uint8Array | string };
}

function getMethod<I extends DescMessage>(m: GetMethod<I>): GetMethod<DescMessage> {
  return m;
}

const { listScoreboard, getByRank, getByUsername } = ScoreboardService.method;

const entryAnswer =
  (encoding: Encoding) =>
  ({ snapshot, entry }: ReturnType<typeof scoreboardCalls.getByRank>) => ({
    snapshot,
    body: encoding === "proto" ? encodeEntry(snapshot, entry) : toJsonString(EntrySchema, entry),
  });

const METHODS = new Map(
  [
    getMethod({
      desc: getByRank,
      answer: ({ store }, request, encoding) =>
        entryAnswer(encoding)(scoreboardCalls.getByRank(store, request)),
    }),
    getMethod({
      desc: getByUsername,
      answer: ({ store }, request, encoding) =>
        entryAnswer(encoding)(scoreboardCalls.getByUsername(store, request)),
    }),
    getMethod({
      desc: listScoreboard,
      answer: ({ store }, request, encoding) => {
        if (encoding === "json") throw new Error("JSON pages take the general path");
        const { snapshot, start, end } = scoreboardCalls.pageRange(store, request);
        return { snapshot, body: cachedPage(snapshot, start, end).subarray(5) };
      },
    }),
  ].map((m) => [`/${ScoreboardService.typeName}/${m.desc.name}`, m]),
);

/**
 * The request of a Connect GET query string as connect-es reads it (the first
 * `encoding`, `message` and `base64` of URLSearchParams; other names ignored),
 * or undefined wherever connect-es would refuse it or do more than this lane
 * does (compression, a message past the read limit, one that does not parse).
 */
function readQuery<I extends DescMessage>(
  input: I,
  query: string,
): { encoding: Encoding; request: MessageShape<I> } | undefined {
  const params = new URLSearchParams(query);
  const encoding = params.get("encoding");
  if ((encoding !== "proto" && encoding !== "json") || params.get("compression") !== null)
    return undefined;
  const message = params.get("message") ?? "";
  let bytes: Uint8Array;
  if (params.get("base64") === "1") {
    if (!/^[A-Za-z0-9_-]*={0,2}$/.test(message)) return undefined;
    bytes = Buffer.from(message, "base64url");
  } else {
    bytes = Buffer.from(message, "utf8");
  }
  if (bytes.length > READ_MAX_BYTES) return undefined;
  try {
    const request =
      encoding === "proto"
        ? fromBinary(input, bytes)
        : fromJsonString(input, Buffer.from(bytes).toString("utf8"));
    return { encoding, request };
  } catch {
    return undefined;
  }
}

/**
 * Connect GET for the scoreboard's calls over HTTP/2, on the raw stream (what
 * browsers' caches and CDNs revalidate, and what crawlers of the board call):
 * the 304 of a current `If-None-Match`, and the successful answers of
 * GetByRank, GetByUsername (binary and JSON) and ListScoreboard (binary), with
 * the same status, headers and bytes as connect-es (the test suite compares
 * both lanes call by call). Everything else returns false untouched and takes
 * the general path: errors (so their bodies are connect-es's own), CORS,
 * compression, timeouts, unknown parameters.
 */
export function createConnectGetLane(
  deps: RouteDeps,
  record: CallRecorder,
): (stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders) => boolean {
  return (stream, headers) => {
    const path = headers[":path"];
    if (headers[":method"] !== "GET" || path === undefined || headers.origin !== undefined)
      return false;
    const question = path.indexOf("?");
    const m = METHODS.get(question < 0 ? path : path.slice(0, question));
    if (m === undefined) return false;
    const snapshot = deps.store.current();
    const ifNoneMatch = headers["if-none-match"];
    if (
      snapshot !== undefined &&
      typeof ifNoneMatch === "string" &&
      etagMatches(ifNoneMatch, snapshot.etag)
    ) {
      record(m.desc).notModified();
      stream.respond(
        { ":status": 304, ...cacheHeaders(snapshot, deps.store), date: httpDate() },
        { endStream: true },
      );
      return true;
    }
    if (headers["connect-timeout-ms"] !== undefined || question < 0) return false;
    const query = readQuery(m.desc.input, path.slice(question + 1));
    if (query === undefined) return false;
    let answer: ReturnType<typeof m.answer>;
    try {
      answer = m.answer(deps, query.request, query.encoding);
    } catch {
      return false; // connect-es answers the error, and records it
    }
    const { body } = answer;
    const length = typeof body === "string" ? Buffer.byteLength(body) : body.length;
    const encoding = headers["accept-encoding"];
    if (length >= COMPRESS_MIN_BYTES && encoding !== undefined && encoding !== "identity")
      return false;
    record(m.desc).ok();
    stream.respond({
      ":status": 200,
      ...cacheHeaders(answer.snapshot, deps.store),
      "content-length": length,
      "content-type": query.encoding === "proto" ? "application/proto" : "application/json",
      date: httpDate(),
    });
    stream.end(body);
    return true;
  };
}
