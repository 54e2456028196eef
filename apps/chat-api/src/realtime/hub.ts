import type { Logger } from "pino";
import type { Database } from "../db/database";
import {
  EVENT_BATCH,
  EVENTS_CHANNEL,
  LOG_NOTICE,
  type LoggedEvent,
  appendEvents,
  logPosition,
  readLog,
  sequenceEvents,
} from "../db/queries/events";
import { Polls } from "./polls";
import { QueueDirectory } from "./queue-directory";
import type { TextSource } from "./shape";

/** Most events a replica keeps in memory (the newest); older ones are read from the log. */
const TAIL_EVENTS = 5000;
/** How often polls' acknowledgements and poll times are written (one statement). */
const BOOKKEEPING_MS = 5000;
/** How often a replica looks at the log's position without being told (lost NOTIFYs). */
const CATCH_UP_MS = 2000;

/** An event of the log as a replica holds it. */
export interface HeldEvent extends LoggedEvent, TextSource {
  /** Its recipients, as a set (built on first use). */
  users?: Set<number>;
}

/** Whether `event` is for `userId`. */
export function isFor(event: HeldEvent, userId: number): boolean {
  event.users ??= new Set(event.user_ids);
  return event.users.has(userId);
}

/**
 * The events of every replica, for the long-polls of this one. Writers
 * append events to the log in their transactions (one row per event,
 * whatever its audience, no queue locked); a sequencer round (one at a
 * time across replicas, under an advisory lock) numbers the committed ones
 * and NOTIFYs the new last number; every replica then reads the new events
 * once into memory (the newest {@link TAIL_EVENTS}) and wakes the polls of
 * their recipients, which answer from memory. A queue's position is the
 * client's acknowledgement; polls note it, and their times, in memory and
 * write them together every {@link BOOKKEEPING_MS}: a poll that finds
 * nothing writes nothing. Queues and the log live in the database, so any
 * replica answers any poll, and queues outlive a replica's restart.
 */
export class EventHub {
  /** The long-polls of this replica. */
  readonly polls = new Polls();
  /** The queues this replica knows, and its polls' bookkeeping. */
  readonly queues: QueueDirectory;
  private readonly unlistens: (() => Promise<void>)[] = [];
  private readonly timers: NodeJS.Timeout[] = [];
  private closed = false;

  /** Events held in memory, in seq order: every event numbered after `tailFloor`. */
  private tail: HeldEvent[] = [];
  private tailFloor = 0;
  /** The last seq this replica has read. */
  private lastSeq = 0;
  /** The log has been pruned up to this seq (queues behind it lost events). */
  private pruned = 0;

  /** Numbering rounds run one after the other on this chain. */
  private rounds: Promise<void> = Promise.resolve();
  /** The round queued on the chain that has not started yet (later requests join it). */
  private queuedRound: Promise<number> | undefined;
  /** Whether a `settle` waits on the queued round. */
  private queuedForSettle = false;
  /** Who waits for this replica to have read up to a seq. */
  private readWaiters: { seq: number; resolve: () => void }[] = [];
  private reading: Promise<void> | undefined;
  private readTarget = 0;
  private ticking: Promise<void> | undefined;

  constructor(
    private readonly db: Database,
    private readonly logger: Logger,
  ) {
    this.queues = new QueueDirectory(db, logger, () => this.closed);
  }

  /** Starts hearing events of every replica. */
  async start(): Promise<void> {
    this.closed = false;
    this.polls.open();
    const position = await logPosition(this.db);
    this.lastSeq = position.last;
    this.tailFloor = position.last;
    this.pruned = position.pruned;
    this.tail = [];
    const restored = () => {
      // NOTIFYs sent while the connection was away were missed: look again.
      this.logger.info("listening for events again: catching up with the log");
      this.queues.clear();
      this.scheduleSequencing();
      void this.catchUp();
    };
    this.unlistens.push(
      await this.db.sql.listen(EVENTS_CHANNEL, (payload) => this.heard(payload), restored),
    );
    // Whoever writes events through this database goes on once this replica holds them.
    const unregister = this.db.onEvents(() => this.settle());
    this.unlistens.push(() => {
      unregister();
      return Promise.resolve();
    });
    this.timers.push(
      setInterval(() => void this.queues.flushBookkeeping(), BOOKKEEPING_MS),
      setInterval(() => void this.catchUp(), CATCH_UP_MS),
    );
    for (const timer of this.timers) timer.unref();
    // Events written while no replica was up are numbered now.
    this.scheduleSequencing();
  }

  /** One NOTIFY of the event system ({@link EVENTS_CHANNEL}). */
  private heard(payload: string): void {
    if (payload === LOG_NOTICE) this.scheduleSequencing();
    else if (payload.startsWith("seq:")) this.readUpTo(Number(payload.slice(4)));
    else if (payload.startsWith("gone:")) this.forget(payload.slice(5));
  }

  /** Stops hearing events, releases every waiting poll and writes the bookkeeping. */
  async stop(): Promise<void> {
    this.closed = true;
    for (const timer of this.timers.splice(0)) clearInterval(timer);
    this.polls.close();
    for (const unlisten of this.unlistens.splice(0)) {
      await unlisten().catch((error: unknown) =>
        this.logger.warn({ err: error }, "could not unlisten"),
      );
    }
    await this.rounds;
    await this.reading?.catch(() => undefined);
    for (const waiter of this.readWaiters.splice(0)) waiter.resolve();
    await this.queues.flushBookkeeping();
  }

  /** Whether the hub is stopping (polls answer at once with what they have). */
  get stopping(): boolean {
    return this.closed;
  }

  /** The last seq this replica has read (events up to it are in memory or the log). */
  get position(): number {
    return this.lastSeq;
  }

  /** The seq up to which the log was pruned when this replica last looked. */
  get prunedUpTo(): number {
    return this.pruned;
  }

  /** Forgets queue `queueId` (deleted on some replica) and wakes its polls. */
  forget(queueId: string): void {
    this.queues.forget(queueId);
    this.polls.wakeQueue(queueId);
  }

  // ---- Events ----

  /**
   * The events numbered after `after` for `userId`, in order, from memory
   * when it holds them all, else undefined (the caller reads the log).
   */
  held(userId: number, after: number): HeldEvent[] | undefined {
    if (after < this.tailFloor) return undefined;
    // The first event after `after` (binary search on seq).
    let lo = 0;
    let hi = this.tail.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((this.tail[mid]?.seq ?? 0) <= after) lo = mid + 1;
      else hi = mid;
    }
    const found: HeldEvent[] = [];
    for (let i = lo; i < this.tail.length; i++) {
      const event = this.tail[i];
      if (event !== undefined && isFor(event, userId)) found.push(event);
    }
    return found;
  }

  /**
   * A seq greater than `after` that no queue receives an event with: the
   * id of a heartbeat. The last seq read when it is greater (a poll that
   * timed out has no event up to it); else a heartbeat is appended to the
   * log (one for all the polls of this replica waiting for one) and its seq
   * awaited.
   */
  async heartbeatId(after: number): Promise<number> {
    while (this.lastSeq <= after && !this.closed) {
      this.ticking ??= this.db
        .transaction((tx) =>
          appendEvents(tx, [
            { userIds: [], type: "heartbeat", payload: '{"type":"heartbeat"}', span: 1 },
          ]),
        )
        .then(() => this.settle())
        .finally(() => {
          this.ticking = undefined;
        });
      await this.ticking;
    }
    return this.lastSeq;
  }

  /**
   * Resolves once the events committed before this call are numbered and
   * read by this replica: whoever wrote events goes on after it
   * (`Tx.wroteEvents`), so that a client's next poll, on this replica,
   * finds the events of the request it was just answered.
   */
  async settle(): Promise<void> {
    // A full batch: more may wait behind it (the round has queued the next one).
    while ((await this.requestRound(true)) === EVENT_BATCH);
    await this.untilRead(this.readTarget);
  }

  /** Resolves once this replica has read up to `seq` (or is stopping). */
  private untilRead(seq: number): Promise<void> {
    if (this.lastSeq >= seq || this.closed) return Promise.resolve();
    return new Promise((resolve) => this.readWaiters.push({ seq, resolve }));
  }

  /**
   * A numbering round that starts after this call (joining one queued and
   * not started); resolves to how many events it numbered. For `settle`, a
   * round that numbers none also reads the log's position (once for all who
   * wait on it): another replica's round may have numbered the events, and
   * its NOTIFY not have come yet.
   */
  private requestRound(settling = false): Promise<number> {
    if (this.closed) return Promise.resolve(0);
    if (settling) this.queuedForSettle = true;
    if (this.queuedRound !== undefined) return this.queuedRound;
    const round = this.rounds.then(async () => {
      this.queuedRound = undefined;
      const wantsPosition = this.queuedForSettle;
      this.queuedForSettle = false;
      const numbered = await sequenceEvents(this.db);
      const first = numbered[0];
      const last = numbered.at(-1);
      if (first === undefined || last === undefined) {
        if (wantsPosition) await this.catchUp();
        return 0;
      }
      if (numbered.length === EVENT_BATCH) this.scheduleSequencing();
      // The round's events follow what this replica holds, and no read is under way
      // (it could bring them too): held as they are, without reading them back.
      if (this.reading === undefined && first.seq - first.span === this.lastSeq && !this.closed) {
        this.readTarget = Math.max(this.readTarget, last.seq);
        this.hold(numbered);
      } else this.readUpTo(last.seq);
      return numbered.length;
    });
    this.queuedRound = round;
    this.rounds = round.then(
      () => undefined,
      (error: unknown) => {
        this.logger.warn({ err: error }, "could not number events");
        // Try again shortly: committed events must not wait for the next send.
        setTimeout(() => this.scheduleSequencing(), 100).unref();
      },
    );
    return round;
  }

  /** Runs a numbering round soon (on a NOTIFY of new events). */
  private scheduleSequencing(): void {
    void this.requestRound().catch(() => undefined);
  }

  /** Looks at the log's position (without a NOTIFY: lost ones, other replicas' pruning). */
  async catchUp(): Promise<void> {
    if (this.closed) return;
    try {
      const position = await logPosition(this.db);
      this.pruned = position.pruned;
      this.readUpTo(position.last);
    } catch (error) {
      this.logger.warn({ err: error }, "could not read the event log's position");
    }
  }

  /** Reads the log up to `seq` into memory (one read at a time) and wakes the recipients. */
  private readUpTo(seq: number): void {
    this.readTarget = Math.max(this.readTarget, seq);
    if (this.reading !== undefined || this.readTarget <= this.lastSeq || this.closed) return;
    this.reading = (async () => {
      while (this.readTarget > this.lastSeq && !this.closed) {
        const events = await readLog(this.db, this.lastSeq);
        if (events.length === 0) {
          // Numbered and already pruned: nothing there to hold.
          this.hold([], this.readTarget);
          break;
        }
        this.hold(events);
      }
    })()
      .catch((error: unknown) => {
        this.logger.warn({ err: error }, "could not read the event log");
      })
      .finally(() => {
        this.reading = undefined;
        if (this.readTarget > this.lastSeq && !this.closed) this.readUpTo(this.readTarget);
      });
  }

  private hold(events: LoggedEvent[], upTo?: number): void {
    if (upTo !== undefined && upTo > this.lastSeq) {
      this.lastSeq = upTo;
      this.tailFloor = Math.max(this.tailFloor, upTo);
      this.tail = [];
    }
    for (const event of events) {
      if (event.seq <= this.lastSeq) continue;
      this.tail.push(event);
      this.lastSeq = event.seq;
    }
    if (this.tail.length > TAIL_EVENTS) {
      const dropped = this.tail.splice(0, this.tail.length - TAIL_EVENTS);
      this.tailFloor = dropped.at(-1)?.seq ?? this.tailFloor;
    }
    // Requests waiting to answer first: the polls are woken a slice at a time (Polls.wake).
    if (this.readWaiters.length > 0) {
      const ready = this.readWaiters.filter((w) => w.seq <= this.lastSeq);
      this.readWaiters = this.readWaiters.filter((w) => w.seq > this.lastSeq);
      for (const waiter of ready) waiter.resolve();
    }
    this.polls.wake(events);
  }
}
