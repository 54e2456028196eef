import type { Logger } from "pino";
import type { Database } from "../db/database";
import { type QueueRow, queueById, writeQueueBookkeeping } from "../db/queries/events";
import { type QueueShape, queueShape } from "./shape";

/**
 * A queue as this replica knows it: only what its polls read (every
 * connected client has one, so the row's options and type list are not
 * kept, and its type set and shape are shared with the queues that asked
 * for the same).
 */
export interface QueueInfo {
  readonly id: string;
  readonly user_id: number;
  /** Events up to this id are acknowledged. */
  last_event_id: number;
  /** Event types asked for (undefined: all), shared: never changed. */
  readonly types: ReadonlySet<string> | undefined;
  /** How its events look ({@link queueShape} of its options), shared: never changed. */
  readonly shape: QueueShape;
}

/**
 * Distinct type lists whose sets are shared; past it, a queue gets a set of
 * its own. Clients ask for a few lists (each app its own); a list is at most
 * 100 names of 100 characters (register's limit), so what anyone can make
 * the replica keep here is at most about 2 MB.
 */
const SHARED_TYPE_SETS_MAX = 100;

/**
 * The queues a replica knows (read once from the database, then from
 * memory), and what its polls noted of them: each queue's acknowledgement
 * and last poll time, written for all of them in one statement
 * (`flushBookkeeping`, every few seconds), so that a poll writes nothing.
 */
export class QueueDirectory {
  private readonly queues = new Map<string, QueueInfo>();
  /** The sets of event types in use, by their sorted list: most clients ask for the same few. */
  private readonly typeSets = new Map<string, ReadonlySet<string>>();
  /** Per queue: its user, acknowledgement and last poll time (ms since the epoch), to write. */
  private readonly bookkeeping = new Map<
    string,
    { userId: number; ack: number; polledAt: number }
  >();

  /** `closing()`: whether the replica is stopping (it remembers no more queues). */
  constructor(
    private readonly db: Database,
    private readonly logger: Logger,
    private readonly closing: () => boolean,
  ) {}

  /** Queue `queueId` if this replica holds it in memory. */
  known(queueId: string): QueueInfo | undefined {
    return this.queues.get(queueId);
  }

  /** Queue `queueId` (from memory, else the database), or undefined. */
  async get(queueId: string): Promise<QueueInfo | undefined> {
    const known = this.queues.get(queueId);
    if (known !== undefined) return known;
    const row = await queueById(this.db, queueId);
    if (row === undefined) return undefined;
    return this.remember(row);
  }

  /** Notes queue `row` (just created, or read). */
  remember(row: QueueRow): QueueInfo {
    const info: QueueInfo = {
      id: row.id,
      user_id: row.user_id,
      last_event_id: row.last_event_id,
      types: row.all_event_types ? undefined : this.typeSet(row.event_types),
      shape: queueShape(row.options),
    };
    if (!this.closing()) this.queues.set(row.id, info);
    return info;
  }

  /** The set of `types`, shared with every queue that asked for the same ones. */
  private typeSet(types: readonly string[]): ReadonlySet<string> {
    const set: ReadonlySet<string> = new Set(types);
    const key = JSON.stringify([...set].sort());
    const known = this.typeSets.get(key);
    if (known !== undefined) return known;
    if (this.typeSets.size < SHARED_TYPE_SETS_MAX) this.typeSets.set(key, set);
    return set;
  }

  /** Notes a poll of `queue` acknowledging up to `ack`, to be written with the next batch. */
  notePoll(queue: QueueInfo, ack: number): void {
    queue.last_event_id = Math.max(queue.last_event_id, ack);
    const entry = this.bookkeeping.get(queue.id);
    if (entry === undefined)
      this.bookkeeping.set(queue.id, {
        userId: queue.user_id,
        ack: queue.last_event_id,
        polledAt: Date.now(),
      });
    else {
      entry.ack = queue.last_event_id;
      entry.polledAt = Date.now();
    }
  }

  /** Forgets queue `queueId` (deleted on some replica). */
  forget(queueId: string): void {
    this.queues.delete(queueId);
    this.bookkeeping.delete(queueId);
  }

  /** Forgets every queue held in memory (the bookkeeping stays, to be written). */
  clear(): void {
    this.queues.clear();
  }

  /**
   * Writes the polls' bookkeeping noted so far (every few seconds), or only
   * that of `userId`'s queues (before a registration of theirs picks queues
   * to collect).
   */
  async flushBookkeeping(userId?: number): Promise<void> {
    const entries: { id: string; ack: number; polledAt: Date }[] = [];
    for (const [id, entry] of this.bookkeeping) {
      if (userId !== undefined && entry.userId !== userId) continue;
      entries.push({ id, ack: entry.ack, polledAt: new Date(entry.polledAt) });
      this.bookkeeping.delete(id);
    }
    if (entries.length === 0) return;
    await writeQueueBookkeeping(this.db, entries).catch((error: unknown) => {
      this.logger.warn({ err: error }, "could not write event queue bookkeeping");
    });
  }
}
