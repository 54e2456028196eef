import { ErrorCode, JsonableError } from "@repo/envelope";
import type { Logger } from "pino";
import type { SqlRunner } from "../db/sql";

/** The PostgreSQL NOTIFY channel that says "queue X has new events". */
export const EVENTS_CHANNEL = "chat_events";

/**
 * Wakes long-polls when their queue gets events, on whichever replica wrote
 * them: events are written with a NOTIFY of their queue id inside the
 * writing transaction (sent on commit, or never), and every replica LISTENs.
 */
export class EventHub {
  private readonly waiters = new Map<string, Set<() => void>>();
  private unlisten: (() => Promise<void>) | undefined;
  private closed = false;

  constructor(
    private readonly sql: SqlRunner,
    private readonly logger: Logger,
  ) {}

  /** Starts hearing new events of every replica. */
  async start(): Promise<void> {
    this.closed = false;
    this.unlisten = await this.sql.listen(
      EVENTS_CHANNEL,
      (queueId) => {
        this.wake(queueId);
      },
      () => {
        // Events written while the connection was away woke nobody: every poll looks again.
        this.logger.info("listening for events again: waking every waiting poll");
        for (const queueId of [...this.waiters.keys()]) this.wake(queueId);
      },
    );
  }

  /** Stops hearing events and releases every waiting poll. */
  async stop(): Promise<void> {
    this.closed = true;
    for (const queueId of [...this.waiters.keys()]) this.wake(queueId);
    const unlisten = this.unlisten;
    this.unlisten = undefined;
    await unlisten?.().catch((error: unknown) =>
      this.logger.warn({ err: error }, "could not unlisten"),
    );
  }

  /** Whether the hub is stopping (polls answer at once with what they have). */
  get stopping(): boolean {
    return this.closed;
  }

  private readonly pollsByUser = new Map<number, number>();

  /**
   * Counts a poll of `userId` while it runs; over `limit` at once on this
   * replica, HTTP 429. Returns the function that ends it.
   */
  admitPoll(userId: number, limit: number): () => void {
    const open = this.pollsByUser.get(userId) ?? 0;
    if (open >= limit) {
      throw new JsonableError(
        `Too many event polls open at once for this user (limit: ${limit}).`,
        ErrorCode.RATE_LIMIT_HIT,
        429,
        { "retry-after": 1 },
        { "Retry-After": "1" },
      );
    }
    this.pollsByUser.set(userId, open + 1);
    let done = false;
    return () => {
      if (done) return;
      done = true;
      const left = (this.pollsByUser.get(userId) ?? 1) - 1;
      if (left === 0) this.pollsByUser.delete(userId);
      else this.pollsByUser.set(userId, left);
    };
  }

  /** Number of polls waiting on this replica. */
  get waiting(): number {
    let count = 0;
    for (const set of this.waiters.values()) count += set.size;
    return count;
  }

  /**
   * A wait for events of `queueId`: register it before looking at the queue
   * (so an event committed in between still wakes it), then await
   * `until(timeoutMs)`, which resolves `true` when woken, `false` on timeout
   * or when `signal` aborts (the client went away). `cancel` forgets it.
   */
  watch(queueId: string): {
    until(timeoutMs: number, signal?: AbortSignal): Promise<boolean>;
    cancel(): void;
  } {
    let woken = false;
    let notify: () => void = () => {
      woken = true;
    };
    const waiter = () => {
      notify();
    };
    let set = this.waiters.get(queueId);
    if (set === undefined) {
      set = new Set();
      this.waiters.set(queueId, set);
    }
    set.add(waiter);
    const cancel = () => {
      const current = this.waiters.get(queueId);
      current?.delete(waiter);
      if (current?.size === 0) this.waiters.delete(queueId);
    };
    return {
      until: (timeoutMs, signal) =>
        new Promise<boolean>((resolve) => {
          if (woken || this.closed || signal?.aborted === true) {
            cancel();
            resolve(woken);
            return;
          }
          const finish = (value: boolean) => {
            clearTimeout(timer);
            signal?.removeEventListener("abort", onAbort);
            cancel();
            resolve(value);
          };
          const onAbort = () => {
            finish(false);
          };
          const timer = setTimeout(() => {
            finish(false);
          }, timeoutMs);
          signal?.addEventListener("abort", onAbort, { once: true });
          notify = () => {
            finish(true);
          };
        }),
      cancel,
    };
  }

  private wake(queueId: string): void {
    const set = this.waiters.get(queueId);
    if (set === undefined) return;
    for (const waiter of [...set]) waiter();
  }
}
