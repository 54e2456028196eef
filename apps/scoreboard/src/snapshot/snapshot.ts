import type { Entry } from "@repo/proto-gen/scoreboard/v1";
import { type BoardColumns, STRINGS_PER_ENTRY } from "./parse";
import { foldHash, foldUsername } from "./fold";

/** What a snapshot reads from: the parsed columns, and a Buffer view of their text. */
interface SnapshotData {
  readonly columns: BoardColumns;
  /** `columns.text` as a Buffer (no copy), to decode one string at a time. */
  readonly text: Buffer;
}

/**
 * One immutable scoreboard: entries ordered by rank, the index to find them by
 * username, and the validators of the data. Readers take one with
 * `store.current()` and answer a whole call from it, so one response never
 * mixes two snapshots.
 *
 * It holds no object per entry and no string of the board: the columns are
 * typed arrays (off the heap), and an {@link Entry} and its strings are made
 * when a call asks for it. A board of a million entries then costs the garbage collector
 * next to nothing, so building, swapping and dropping snapshots does not stall
 * the calls being answered.
 */
export class Snapshot {
  /** Entity tag of every response read from this snapshot, quoted as HTTP wants it. */
  readonly etag: string;

  private constructor(
    /** The data, shared with {@link refetched} copies. */
    readonly data: SnapshotData,
    /** When the data was fetched, Unix seconds. */
    readonly fetchedAt: bigint,
  ) {
    this.etag = `"${data.columns.digest.slice(0, 20)}-${fetchedAt.toString(36)}"`;
  }

  /** SHA-256 (hex) of the data the board was parsed from. */
  get digest(): string {
    return this.data.columns.digest;
  }

  /** Number of entries. */
  get total(): number {
    return this.data.columns.count;
  }

  /** String `k` of entry `i` (0 username, 1 profile path, 2 country, 3 grade, 4 folded username). */
  private text(i: number, k: number): string {
    const { offsets } = this.data.columns;
    const at = i * STRINGS_PER_ENTRY + k;
    return this.data.text.toString("utf8", offsets[at], offsets[at + 1]);
  }

  /** Entry `i` (rank i + 1), made from the columns. */
  private entry(i: number): Entry {
    return Object.freeze({
      $typeName: "scoreboard.v1.Entry",
      rank: i + 1,
      username: this.text(i, 0),
      profilePath: this.text(i, 1),
      country: this.text(i, 2),
      grade: this.text(i, 3),
      score: this.data.columns.scores[i] ?? 0,
    });
  }

  /** Entries from `offset`, at most `limit` of them (0 = all the rest). */
  page(offset: number, limit: number): readonly Entry[] {
    const end = limit === 0 ? this.total : Math.min(this.total, offset + limit);
    const entries: Entry[] = [];
    for (let i = offset; i < end; i++) entries.push(this.entry(i));
    return Object.freeze(entries);
  }

  /** The entry with canonical rank `rank`. */
  byRank(rank: number): Entry | undefined {
    return rank >= 1 && rank <= this.total ? this.entry(rank - 1) : undefined;
  }

  /** The entry for `username`, case-insensitively: an exact-case match wins, else the best-ranked. */
  byUsername(username: string): Entry | undefined {
    const rank = this.rankOf(username);
    return rank === undefined ? undefined : this.entry(rank - 1);
  }

  /** The rank of `username`'s entry, as {@link byUsername} finds it, without reading the entry. */
  rankOf(username: string): number | undefined {
    const key = foldUsername(username);
    const hash = foldHash(key);
    const { foldHashes, foldOrder } = this.data.columns;
    let low = 0;
    let high = foldHashes.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if ((foldHashes[middle] ?? 0) < hash) low = middle + 1;
      else high = middle;
    }
    let best: number | undefined;
    for (let p = low; p < foldHashes.length && foldHashes[p] === hash; p++) {
      const i = foldOrder[p] ?? 0;
      if (this.text(i, 4) !== key) continue;
      if (this.text(i, 0) === username) return i + 1;
      best ??= i; // ties are in rank order: the first is the best-ranked
    }
    return best === undefined ? undefined : best + 1;
  }

  /** The same data fetched again at `fetchedAt` (a conditional fetch answered 304). */
  refetched(fetchedAt: bigint): Snapshot {
    return new Snapshot(this.data, fetchedAt);
  }

  /** A snapshot of parsed columns, fetched at `fetchedAt` (Unix seconds): nothing to decode. */
  static build(columns: BoardColumns, fetchedAt: bigint): Promise<Snapshot> {
    const { text } = columns;
    const view = Buffer.from(text.buffer, text.byteOffset, text.byteLength);
    return Promise.resolve(new Snapshot({ columns, text: view }, fetchedAt));
  }
}
