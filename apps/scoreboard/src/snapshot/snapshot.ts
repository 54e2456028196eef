import { setImmediate as yieldToEventLoop } from "node:timers/promises";
import type { Entry } from "@repo/proto-gen/scoreboard/v1";
import { type BoardColumns, ENTRIES_PER_CHUNK, STRINGS_PER_ENTRY } from "./parse";
import { foldUsername } from "./fold";

/** Folded username -> ranks (1-based) of every entry with that key, best first; only for keys shared by several. */
type Collisions = ReadonlyMap<string, readonly number[]>;

/**
 * One immutable scoreboard: entries ordered by rank, the indexes to find them,
 * and the validators of the data. Readers take one with `store.current()` and
 * answer a whole call from it, so one response never mixes two snapshots.
 */
export class Snapshot {
  /** Entity tag of every response read from this snapshot, quoted as HTTP wants it. */
  readonly etag: string;

  private constructor(
    /** Entries; `entries[i].rank === i + 1`. */
    readonly entries: readonly Entry[],
    private readonly byFolded: ReadonlyMap<string, number>,
    private readonly collisions: Collisions,
    /** SHA-256 (hex) of the data the board was parsed from. */
    readonly digest: string,
    /** When the data was fetched, Unix seconds. */
    readonly fetchedAt: bigint,
  ) {
    this.etag = `"${digest.slice(0, 20)}-${fetchedAt.toString(36)}"`;
  }

  /** Number of entries. */
  get total(): number {
    return this.entries.length;
  }

  /** Entries from `offset`, at most `limit` of them (0 = all the rest). */
  page(offset: number, limit: number): readonly Entry[] {
    if (offset >= this.entries.length) return [];
    return this.entries.slice(offset, limit === 0 ? undefined : offset + limit);
  }

  /** The entry with canonical rank `rank`. */
  byRank(rank: number): Entry | undefined {
    return this.entries[rank - 1];
  }

  /** The entry for `username`, case-insensitively: an exact-case match wins, else the best-ranked. */
  byUsername(username: string): Entry | undefined {
    const key = foldUsername(username);
    const shared = this.collisions.get(key);
    if (shared !== undefined) {
      const exact = shared.find((rank) => this.entries[rank - 1]?.username === username);
      return this.entries[(exact ?? shared[0] ?? 0) - 1];
    }
    const rank = this.byFolded.get(key);
    return rank === undefined ? undefined : this.entries[rank - 1];
  }

  /** The same data fetched again at `fetchedAt` (a conditional fetch answered 304). */
  refetched(fetchedAt: bigint): Snapshot {
    return new Snapshot(this.entries, this.byFolded, this.collisions, this.digest, fetchedAt);
  }

  /**
   * Builds a snapshot from parsed columns in slices of `sliceSize` entries,
   * yielding to the event loop between slices so that calls keep being
   * answered while a large board is indexed.
   */
  static async build(
    columns: BoardColumns,
    fetchedAt: bigint,
    sliceSize = 4_000,
  ): Promise<Snapshot> {
    const { count, scores, offsets, text, chunkEnds } = columns;
    const decoder = new TextDecoder();
    let chunk = "";
    let chunkEnd = 0; // index of the first string past the current chunk
    const str = (i: number): string =>
      chunk.substring(offsets[i] ?? 0, i + 1 < chunkEnd ? offsets[i + 1] : undefined);
    const entries = new Array<Entry>(count);
    const byFolded = new Map<string, number>();
    const collisions = new Map<string, number[]>();
    for (let start = 0; start < count; start += sliceSize) {
      if (start > 0) await yieldToEventLoop();
      const end = Math.min(count, start + sliceSize);
      for (let i = start; i < end; i++) {
        if (i % ENTRIES_PER_CHUNK === 0) {
          const j = i / ENTRIES_PER_CHUNK;
          chunk = decoder.decode(text.subarray(chunkEnds[j - 1] ?? 0, chunkEnds[j]));
          chunkEnd = Math.min(count, i + ENTRIES_PER_CHUNK) * STRINGS_PER_ENTRY;
        }
        const s = i * STRINGS_PER_ENTRY;
        const rank = i + 1;
        entries[i] = Object.freeze({
          $typeName: "scoreboard.v1.Entry",
          rank,
          username: str(s),
          profilePath: str(s + 1),
          country: str(s + 2),
          grade: str(s + 3),
          score: scores[i] ?? 0,
        });
        const key = str(s + 4);
        const first = byFolded.get(key);
        if (first === undefined) byFolded.set(key, rank);
        else {
          const shared = collisions.get(key);
          if (shared === undefined) collisions.set(key, [first, rank]);
          else shared.push(rank);
        }
      }
    }
    return new Snapshot(Object.freeze(entries), byFolded, collisions, columns.digest, fetchedAt);
  }
}
