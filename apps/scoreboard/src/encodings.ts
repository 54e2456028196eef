import { toBinary } from "@bufbuild/protobuf";
import { BinaryWriter, WireType } from "@bufbuild/protobuf/wire";
import { type Entry, EntrySchema } from "@repo/proto-gen/scoreboard/v1";
import type { PageAnswer } from "./service";
import type { Snapshot } from "./snapshot/snapshot";

/*
 * The scoreboard's answers encoded once per snapshot and kept with it (every
 * snapshot is immutable, so an encoding never goes stale; it goes with its
 * snapshot): entries by rank, and whole ListScoreboard pages. Shared by the
 * gRPC fast lane and the Connect GET lane.
 */

/**
 * Encoded entries by rank, kept as long as their (immutable) snapshot: most
 * calls then encode nothing. Each is kept framed as a gRPC message (a zero
 * flag byte and the length, then the bytes), so the gRPC lane writes it as it
 * is; the other paths take the message itself (`subarray(5)`, no copy).
 */
const encodings = new WeakMap<Snapshot, (Buffer | undefined)[]>();
/**
 * Pages longer than this are encoded without filling the cache: one `limit = 0`
 * call on a large board would otherwise keep an encoding of every entry.
 */
const CACHED_PAGE_MAX = 1000;

/** `message` framed as one gRPC message: flag byte 0 (uncompressed), its length, then it. */
export function grpcFrame(message: Uint8Array): Buffer {
  const frame = Buffer.allocUnsafe(5 + message.length);
  frame[0] = 0;
  frame.writeUInt32BE(message.length, 1);
  frame.set(message, 5);
  return frame;
}

function entryCache(snapshot: Snapshot): (Buffer | undefined)[] {
  let cache = encodings.get(snapshot);
  if (cache === undefined) {
    cache = [];
    encodings.set(snapshot, cache);
  }
  return cache;
}

/** An entry's encoding (from the cache, or made and kept unless `keep` is false). */
export function encodeEntry(snapshot: Snapshot, entry: Entry, keep = true): Uint8Array {
  const cache = entryCache(snapshot);
  const framed = cache[entry.rank - 1];
  if (framed !== undefined) return framed.subarray(5);
  const bytes = toBinary(EntrySchema, entry);
  if (keep) cache[entry.rank - 1] = grpcFrame(bytes);
  return bytes;
}

/**
 * The entry of rank `rank` (which the snapshot has) framed as a gRPC message:
 * from the cache without reading the entry at all, or made once and kept.
 */
export function framedEntry(snapshot: Snapshot, rank: number): Buffer {
  const cache = entryCache(snapshot);
  let framed = cache[rank - 1];
  if (framed === undefined) {
    const entry = snapshot.byRank(rank);
    if (entry === undefined) throw new Error(`rank ${String(rank)} is not in the snapshot`);
    framed = grpcFrame(toBinary(EntrySchema, entry));
    cache[rank - 1] = framed;
  }
  return framed;
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

/** Bytes of encoded pages kept per snapshot (least recently used first out). */
const PAGE_CACHE_BYTES = 64 * 1024 * 1024;
/** Encoded ListScoreboard answers by entry range, framed as gRPC messages, per (immutable) snapshot. */
const pages = new WeakMap<Snapshot, { byRange: Map<string, Buffer>; bytes: number }>();

/**
 * The ListScoreboard answer for entries [start, end) of `snapshot`, from the
 * page cache or encoded once and kept, framed as a gRPC message (the message
 * itself is `subarray(5)`): a board's pages are asked for again and
 * again (the first page, the whole board), and a 10,000-entry page costs
 * milliseconds of CPU to build. A page larger than a quarter of the budget is
 * not kept.
 */
export function cachedPage(snapshot: Snapshot, start: number, end: number): Buffer {
  let cache = pages.get(snapshot);
  if (cache === undefined) {
    cache = { byRange: new Map(), bytes: 0 };
    pages.set(snapshot, cache);
  }
  const key = `${String(start)}:${String(end)}`;
  const hit = cache.byRange.get(key);
  if (hit !== undefined) {
    cache.byRange.delete(key); // most recently used goes last
    cache.byRange.set(key, hit);
    return hit;
  }
  // (page's limit 0 means "to the end": an empty range has no entries to read.)
  const entries = end > start ? snapshot.page(start, end - start) : [];
  const bytes = grpcFrame(encodePage({ snapshot, entries }));
  if (end > start && bytes.length <= PAGE_CACHE_BYTES / 4) {
    cache.byRange.set(key, bytes);
    cache.bytes += bytes.length;
    for (const [oldKey, old] of cache.byRange) {
      if (cache.bytes <= PAGE_CACHE_BYTES) break;
      cache.byRange.delete(oldKey);
      cache.bytes -= old.length;
    }
  }
  return bytes;
}
