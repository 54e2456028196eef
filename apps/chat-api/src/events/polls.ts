import { ErrorCode, JsonableError } from "@repo/envelope";

/** How many polls one turn of the event loop wakes ({@link Polls.wake}). */
const WAKE_SLICE = 64;

/** A poll waiting for events of its queue. */
interface Waiter {
  queueId: string;
  /** The event types its queue receives (undefined: all): other events do not wake it. */
  types: Set<string> | undefined;
  wake(): void;
}

/** A wait for events, from {@link Polls.watch}. */
export interface Watch {
  /** Resolves `true` when woken, `false` after `timeoutMs`, when `signal` aborts or the replica stops. */
  until(timeoutMs: number, signal?: AbortSignal): Promise<boolean>;
  /** Forgets the wait. */
  cancel(): void;
}

/**
 * The long-polls of this replica: how many each user has open (capped), and
 * which wait for which user's events, to be woken when those arrive.
 */
export class Polls {
  private readonly openByUser = new Map<number, number>();
  private readonly waitersByUser = new Map<number, Set<Waiter>>();
  /** Polls to wake, in the order their events came. */
  private readonly toWake = new Set<Waiter>();
  private waking = false;
  private closed = false;

  /**
   * Counts a poll of `userId` while it runs; over `limit` at once on this
   * replica, HTTP 429. Returns the function that ends it.
   */
  admit(userId: number, limit: number): () => void {
    const open = this.openByUser.get(userId) ?? 0;
    if (open >= limit) {
      throw new JsonableError(
        `Too many event polls open at once for this user (limit: ${limit}).`,
        ErrorCode.RATE_LIMIT_HIT,
        429,
        { "retry-after": 1 },
        { "Retry-After": "1" },
      );
    }
    this.openByUser.set(userId, open + 1);
    let done = false;
    return () => {
      if (done) return;
      done = true;
      const left = (this.openByUser.get(userId) ?? 1) - 1;
      if (left === 0) this.openByUser.delete(userId);
      else this.openByUser.set(userId, left);
    };
  }

  /**
   * A wait for events of `userId`'s queue `queueId` (of `types`; undefined:
   * all): register it before looking for events, so that one arriving in
   * between still wakes it.
   */
  watch(userId: number, queueId: string, types: Set<string> | undefined): Watch {
    let woken = false;
    let notify: () => void = () => {
      woken = true;
    };
    const waiter: Waiter = {
      queueId,
      types,
      wake: () => {
        notify();
      },
    };
    let set = this.waitersByUser.get(userId);
    if (set === undefined) {
      set = new Set();
      this.waitersByUser.set(userId, set);
    }
    set.add(waiter);
    const cancel = () => {
      const current = this.waitersByUser.get(userId);
      current?.delete(waiter);
      if (current?.size === 0) this.waitersByUser.delete(userId);
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

  /**
   * Wakes the polls of the recipients of `events` whose queue asked for
   * their type, {@link WAKE_SLICE} at a time, each slice on a turn of the
   * event loop of its own: a message to a thousand queues does not hold the
   * loop for the thousand answers, and other requests' database answers are
   * read between the slices. A poll woken in a later slice answers with
   * whatever has arrived by then.
   */
  wake(events: readonly { user_ids: readonly number[]; event_type: string }[]): void {
    for (const event of events)
      for (const userId of event.user_ids)
        for (const waiter of this.waitersByUser.get(userId) ?? [])
          if (waiter.types === undefined || waiter.types.has(event.event_type))
            this.toWake.add(waiter);
    if (!this.waking && this.toWake.size > 0) {
      this.waking = true;
      setImmediate(this.wakeSlice);
    }
  }

  private readonly wakeSlice = (): void => {
    let woken = 0;
    for (const waiter of this.toWake) {
      this.toWake.delete(waiter);
      waiter.wake();
      if (++woken === WAKE_SLICE) break;
    }
    if (this.toWake.size > 0) setImmediate(this.wakeSlice);
    else this.waking = false;
  };

  /** Wakes the polls of queue `queueId` (deleted: they answer BAD_EVENT_QUEUE_ID). */
  wakeQueue(queueId: string): void {
    for (const set of this.waitersByUser.values())
      for (const waiter of [...set]) if (waiter.queueId === queueId) waiter.wake();
  }

  /** Lets polls wait (the replica has started). */
  open(): void {
    this.closed = false;
  }

  /** Releases every waiting poll, and every later one at once (the replica stops). */
  close(): void {
    this.closed = true;
    for (const set of this.waitersByUser.values()) for (const waiter of [...set]) waiter.wake();
  }
}
