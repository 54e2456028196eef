import { performance } from "node:perf_hooks";
import { LRUCache } from "lru-cache";
import type { Tx } from "../db/kysely";
import { type BoardRow, boardRowsAfter } from "../db/queries/presence";

/**
 * The longest a presence row's number can stay uncommitted: numbers come
 * from a sequence, so a write may commit after a write numbered later. Twice
 * the transaction timeout (5 s); a write is one statement or a short
 * transaction, and takes its number at its start.
 */
export const UNCOMMITTED_MS = 10_000;

/** Most presence rows the boards of all realms hold together; the least recently asked realm goes first. */
const MAX_ROWS = 500_000;

/** A user's presence as a board holds it. */
interface Entry {
  userId: number;
  updateId: number;
  connectedMs: number;
  text: string;
  shown: boolean;
}

/** The highest number a read had seen, and when its answer came (monotonic milliseconds). */
interface Mark {
  receivedAt: number;
  upto: number;
}

/** What an answer asks for: changes after `after` (all when undefined), seen since `sinceMs`, of `only` if given. */
export interface BoardQuery {
  after: number | undefined;
  sinceMs: number;
  only: ReadonlySet<number> | undefined;
}

/**
 * One realm's presences in memory, kept up to date by reads of the rows
 * numbered since the last read, one read at a time.
 *
 * Why a read may skip no row: a row committed after the previous read was
 * sent took its number at most `uncommittedMs` ({@link UNCOMMITTED_MS}) before it committed,
 * so after every number a read had seen by then. A read asks for the rows
 * numbered after what the newest read answered before that moment had seen
 * (all rows when there is none), but those the board holds already.
 */
class Board {
  private readonly byUser = new Map<number, Entry>();
  /** Ascending user ids: the answer's key order, as a JavaScript object orders integer keys. */
  private entries: Entry[] = [];
  private sorted = true;
  /** The realm's highest number (-1: no row). */
  newest = -1;
  private marks: Mark[] = [];
  private lastSentAt: number | undefined;
  private running: Promise<void> | undefined;
  private queued: Promise<void> | undefined;

  constructor(
    private readonly realmId: number,
    private readonly uncommittedMs: number,
  ) {}

  get size(): number {
    return this.byUser.size;
  }

  /** Resolves once a read sent after this call has been merged (concurrent callers share it). */
  catchUp(tx: Tx): Promise<void> {
    if (this.queued !== undefined) return this.queued;
    const running = this.running;
    if (running === undefined) return this.start(tx);
    const queued = running
      .catch(() => undefined)
      .then(() => {
        this.queued = undefined;
        return this.start(tx);
      });
    this.queued = queued;
    return queued;
  }

  /** The answer's `presences` object as JSON text (the bytes `JSON.stringify` gives). */
  render(query: BoardQuery): string {
    if (!this.sorted) {
      this.entries.sort((x, y) => x.userId - y.userId);
      this.sorted = true;
    }
    const { after, sinceMs, only } = query;
    const texts: string[] = [];
    for (const entry of this.entries) {
      if (!entry.shown || entry.connectedMs < sinceMs) continue;
      if (after !== undefined && entry.updateId <= after) continue;
      if (only !== undefined && !only.has(entry.userId)) continue;
      texts.push(entry.text);
    }
    return `{${texts.join(",")}}`;
  }

  private start(tx: Tx): Promise<void> {
    const run = this.read(tx).finally(() => {
      this.running = undefined;
    });
    this.running = run;
    return run;
  }

  private async read(tx: Tx): Promise<void> {
    const sentAt = performance.now();
    const after = this.lowerBound();
    const known = after < 0 ? [] : this.numbersAfter(after);
    const rows = await boardRowsAfter(tx, this.realmId, after, known);
    if (after < 0) this.clear();
    for (const row of rows) this.merge(row);
    this.marks.push({ receivedAt: performance.now(), upto: this.newest });
    this.lastSentAt = sentAt;
  }

  /** The number the next read asks for rows after (-1: all). */
  private lowerBound(): number {
    if (this.lastSentAt === undefined) return -1;
    const limit = this.lastSentAt - this.uncommittedMs;
    // Marks are in order of arrival: keep the newest one before the limit, and those after it.
    let found = -1;
    while (this.marks.length > 0 && (this.marks[0]?.receivedAt ?? Infinity) <= limit) {
      const mark = this.marks.shift();
      if (mark !== undefined) found = mark.upto;
    }
    if (found >= 0) this.marks.unshift({ receivedAt: limit, upto: found });
    return found;
  }

  /** The numbers of the entries numbered after `after`. */
  private numbersAfter(after: number): number[] {
    const numbers: number[] = [];
    for (const entry of this.entries) if (entry.updateId > after) numbers.push(entry.updateId);
    return numbers;
  }

  private clear(): void {
    this.byUser.clear();
    this.entries = [];
    this.sorted = true;
    this.newest = -1;
  }

  private merge(row: BoardRow): void {
    const held = this.byUser.get(row.user_id);
    if (held === undefined) {
      const entry: Entry = {
        userId: row.user_id,
        updateId: row.last_update_id,
        connectedMs: row.connected_ms,
        text: row.slim_entry,
        shown: row.shown,
      };
      this.byUser.set(row.user_id, entry);
      this.entries.push(entry);
      this.sorted = false;
    } else if (row.last_update_id > held.updateId) {
      held.updateId = row.last_update_id;
      held.connectedMs = row.connected_ms;
      held.text = row.slim_entry;
      held.shown = row.shown;
    }
    if (row.last_update_id > this.newest) this.newest = row.last_update_id;
  }
}

/**
 * The modern presence answer (`last_update_id` clients, each of whom asks
 * every minute) from this replica's memory: each realm's board reads only
 * the rows numbered since its last read, instead of every client's answer
 * reading, sorting and joining the realm's rows in the database. Every write
 * of a presence row, and every change of whether a user is shown, takes a
 * new number (triggers `presences_write`, `users_presence_shown`), so the
 * reads miss no change, whichever replica or statement made it.
 */
export class PresenceBoards {
  private readonly boards = new LRUCache<number, Board>({
    maxSize: MAX_ROWS,
    sizeCalculation: (board) => Math.max(1, board.size),
  });

  constructor(
    private readonly db: Tx,
    private readonly uncommittedMs = UNCOMMITTED_MS,
  ) {}

  /**
   * Realm `realmId`'s presences that `query` asks for, as JSON text, and the
   * realm's newest number (-1: none), as of a read sent after this call.
   */
  async answer(realmId: number, query: BoardQuery): Promise<{ json: string; newest: number }> {
    const board = this.boards.get(realmId) ?? new Board(realmId, this.uncommittedMs);
    await board.catchUp(this.db);
    // Again after the read: its size changed, and the realm was asked for last.
    this.boards.set(realmId, board);
    return { json: board.render(query), newest: board.newest };
  }
}
