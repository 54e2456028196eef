import type { Readable, Writable } from "node:stream";
import { LoadFailure, type LoadResult } from "./load";
import { type BoardColumns, STRINGS_PER_ENTRY } from "./parse";
import type { BoardSource, Validators } from "./sources";

/** The environment variable that gives the loading process its job, as JSON. */
export const LOAD_JOB_VARIABLE = "SCOREBOARD_LOAD_JOB";

/** What the loading process is asked to do. */
export interface LoadJob {
  source: BoardSource;
  since: Validators;
  timeoutMs: number;
  /** The parse's nice value (LOAD_NICE in production). */
  nice: number;
}

/** Elements in each column of a board. */
interface ColumnLengths {
  offsets: number;
  scores: number;
  foldHashes: number;
  foldOrder: number;
  text: number;
}

/**
 * What the loading process says first: the load's outcome, or why it failed;
 * for data, the columns' sizes (their bytes follow).
 */
type ReplyHeader =
  | {
      kind: "data";
      validators: Validators;
      count: number;
      fetchedAt: number | null;
      digest: string;
      lengths: ColumnLengths;
    }
  | { kind: "not-modified" }
  | { kind: "unchanged" }
  | { kind: "rejected"; message: string }
  | { kind: "failed"; message: string };

/** What the loading process has to tell: a load's result, or why it failed. */
export type LoadReply =
  LoadResult | { kind: "rejected"; message: string } | { kind: "failed"; message: string };

/** A header is a few hundred bytes (validators, a digest, a reason); more is not a reply. */
const MAX_HEADER_BYTES = 64 * 1024;

/**
 * The columns' arrays in the order their bytes cross: the four of 4-byte
 * elements, then the text, so that each starts at a multiple of 4 bytes of
 * one buffer on the reading side and is a view of it, not a copy.
 */
function columnArrays(c: BoardColumns): Uint8Array[] {
  return [c.offsets, c.scores, c.foldHashes, c.foldOrder, c.text].map(
    (a) => new Uint8Array(a.buffer, a.byteOffset, a.byteLength),
  );
}

/** Bytes of the columns of `lengths`. */
const bodyBytes = (l: ColumnLengths): number =>
  4 * (l.offsets + l.scores + l.foldHashes + l.foldOrder) + l.text;

/**
 * Writes `reply` on `channel`: a 4-byte big-endian length, the header as JSON,
 * then for data the columns' bytes, without copying them; `written` runs once
 * the last byte has left this process.
 */
export function writeReply(channel: Writable, reply: LoadReply, written: () => void): void {
  const header: ReplyHeader =
    reply.kind === "data"
      ? {
          kind: "data",
          validators: reply.validators,
          count: reply.columns.count,
          fetchedAt: reply.columns.fetchedAt,
          digest: reply.columns.digest,
          lengths: {
            offsets: reply.columns.offsets.length,
            scores: reply.columns.scores.length,
            foldHashes: reply.columns.foldHashes.length,
            foldOrder: reply.columns.foldOrder.length,
            text: reply.columns.text.length,
          },
        }
      : reply;
  const json = Buffer.from(JSON.stringify(header));
  const size = Buffer.alloc(4);
  size.writeUInt32BE(json.length);
  channel.write(size);
  channel.write(json);
  if (reply.kind === "data") for (const part of columnArrays(reply.columns)) channel.write(part);
  channel.end(written);
}

/** The columns of a data header, as views of `body`, which holds their bytes. */
function columnsOf(header: ReplyHeader & { kind: "data" }, body: Uint8Array): BoardColumns {
  const { lengths: l, count } = header;
  if (
    l.offsets !== count * STRINGS_PER_ENTRY + 1 ||
    l.scores !== count ||
    l.foldHashes !== count ||
    l.foldOrder !== count
  )
    throw failure(`column sizes that do not fit ${count} entries`);
  const { buffer } = body;
  let at = 0;
  const next = (elements: number): number => {
    const start = at;
    at += 4 * elements;
    return start;
  };
  return {
    count,
    offsets: new Uint32Array(buffer, next(l.offsets), l.offsets),
    scores: new Int32Array(buffer, next(l.scores), l.scores),
    foldHashes: new Uint32Array(buffer, next(l.foldHashes), l.foldHashes),
    foldOrder: new Uint32Array(buffer, next(l.foldOrder), l.foldOrder),
    text: new Uint8Array(buffer, at, l.text),
    fetchedAt: header.fetchedAt,
    digest: header.digest,
  };
}

/**
 * A reply put together chunk by chunk as it arrives: the columns' bytes are
 * copied straight into one buffer of their announced size, so the reading
 * thread (the loading worker's, in production) holds no more than the
 * finished columns and does no step longer than copying one chunk.
 */
class ReplyAssembler {
  /** The bytes of an unfinished header. */
  private head: Buffer = Buffer.alloc(0);
  private header: ReplyHeader | undefined;
  private body = new Uint8Array(0);
  private filled = 0;

  /** Takes the next chunk; throws a {@link LoadFailure} when the bytes are not a reply. */
  push(chunk: Buffer): void {
    let rest = chunk;
    if (this.header === undefined) {
      this.head = this.head.length === 0 ? chunk : Buffer.concat([this.head, chunk]);
      if (this.head.length < 4) return;
      const size = this.head.readUInt32BE(0);
      if (size > MAX_HEADER_BYTES) throw failure(`a header of ${size} bytes`);
      if (this.head.length < 4 + size) return;
      this.header = parseHeader(this.head.toString("utf8", 4, 4 + size));
      if (this.header.kind === "data") this.body = new Uint8Array(bodyBytes(this.header.lengths));
      rest = this.head.subarray(4 + size);
      this.head = Buffer.alloc(0);
    }
    if (this.filled + rest.length > this.body.length)
      throw failure("more bytes than the header announced");
    this.body.set(rest, this.filled);
    this.filled += rest.length;
  }

  /** The reply, once its last byte has come; throws a {@link LoadFailure} before. */
  finish(): LoadReply {
    const { header, body, filled } = this;
    if (header === undefined) throw new LoadFailure("the loading process ended without a reply");
    if (filled < body.length)
      throw new LoadFailure(`the loading process stopped after ${filled} of ${body.length} bytes`);
    if (header.kind !== "data") return header;
    return { kind: "data", columns: columnsOf(header, body), validators: header.validators };
  }
}

/** The error for bytes from the loading process that are not a reply. */
const failure = (what: string): LoadFailure => new LoadFailure(`the loading process sent ${what}`);

function parseHeader(json: string): ReplyHeader {
  try {
    return JSON.parse(json) as ReplyHeader;
  } catch {
    throw failure("a header that is not JSON");
  }
}

/**
 * Reads the reply {@link writeReply} wrote on `channel` as it arrives.
 * Resolves when `channel` ends after a whole reply; rejects with a
 * {@link LoadFailure} saying what was wrong otherwise (the loading process
 * died while writing, or wrote something else).
 */
export function readReply(channel: Readable): Promise<LoadReply> {
  const reply = new ReplyAssembler();
  return new Promise((resolve, reject) => {
    let broken: Error | undefined;
    channel.on("data", (chunk: Buffer) => {
      if (broken !== undefined) return;
      try {
        reply.push(chunk);
      } catch (error) {
        broken = error instanceof Error ? error : new LoadFailure(String(error));
        channel.destroy();
      }
    });
    channel.on("error", (error: Error) => {
      broken ??= new LoadFailure(`the loading process's channel failed: ${error.message}`);
    });
    // After an end, a destroy or an error: a promise settles once.
    const settle = (): void => {
      if (broken !== undefined) {
        reject(broken);
        return;
      }
      try {
        resolve(reply.finish());
      } catch (error) {
        reject(error instanceof Error ? error : new LoadFailure(String(error)));
      }
    };
    channel.on("end", settle);
    channel.on("close", settle);
  });
}
