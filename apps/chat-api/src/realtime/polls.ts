import { InFlightByUser } from "../lib/concurrency";

/** What is told when a client goes away: a waiting long-poll. */
export interface GoneListener {
  clientGone(): void;
}

/** The client of a request, as a long-poll watches it (a long-poll stops waiting when it goes). */
export interface Client {
  /** Whether it went away before the answer. */
  readonly gone: boolean;
  /**
   * Told when it goes away before the answer (one listener; `undefined`
   * removes it). An object, not a callback: a held poll makes no closure.
   */
  onGone: GoneListener | undefined;
}

/** How many polls one turn of the event loop wakes ({@link Polls.wake}). */
const WAKE_SLICE = 64;
/**
 * The resolution of polls' deadlines: a deadline is met on the first tick of
 * this many milliseconds at or after it, so one timer serves all the polls
 * whose deadlines fall in the same tick.
 */
const TICK_MS = 100;

/**
 * A poll waiting for events of its queue, from {@link Polls.watch}. It
 * allocates nothing else while it waits: it is its user's list node and its
 * deadline's set member, and its methods are the class's.
 */
export class Watch implements GoneListener {
  /** Woken before it started to wait. */
  private woken = false;
  /** Done: answered, timed out, gone or cancelled. */
  private done = false;
  private resolve: ((woken: boolean) => void) | undefined;
  private client: Client | undefined;
  /** The tick of its deadline while it waits (0: none). */
  tick = 0;
  /** The previous and next watch of the same user (the list {@link Polls} keeps per user). */
  prev: Watch | undefined;
  next: Watch | undefined;

  constructor(
    private readonly polls: Polls,
    readonly userId: number,
    readonly queueId: string,
    /** The event types its queue receives (undefined: all): other events do not wake it. */
    readonly types: ReadonlySet<string> | undefined,
  ) {}

  /**
   * Resolves `true` when woken, `false` after `timeoutMs` (at most one tick
   * late), when `client` goes away or the replica stops.
   */
  until(timeoutMs: number, client?: Client): Promise<boolean> {
    if (this.done || this.woken || this.polls.stopping || client?.gone === true) {
      this.finish(this.woken);
      return Promise.resolve(this.woken);
    }
    return new Promise<boolean>((resolve) => {
      this.resolve = resolve;
      if (client !== undefined) {
        this.client = client;
        client.onGone = this;
      }
      this.polls.schedule(this, Date.now() + timeoutMs);
    });
  }

  /** Its queue has events, it was deleted, or the replica stops. */
  wake(): void {
    if (this.resolve === undefined) this.woken = true;
    else this.finish(true);
  }

  /** Forgets the wait (also when its deadline has passed). */
  cancel(): void {
    this.finish(false);
  }

  /** Its client went away. */
  clientGone(): void {
    this.finish(false);
  }

  private finish(woken: boolean): void {
    if (this.done) return;
    this.done = true;
    if (this.client !== undefined) {
      this.client.onGone = undefined;
      this.client = undefined;
    }
    this.polls.forget(this);
    const resolve = this.resolve;
    this.resolve = undefined;
    resolve?.(woken);
  }
}

/**
 * The long-polls of this replica: how many each user has open (capped), and
 * which wait for which user's events, to be woken when those arrive. The
 * waiting polls' deadlines share one timer.
 */
export class Polls {
  private readonly openByUser = new InFlightByUser("event polls open");
  /** The first of each user's watches (a doubly linked list through the watches). */
  private readonly watchesByUser = new Map<number, Watch>();
  /** Polls to wake, in the order their events came. */
  private readonly toWake = new Set<Watch>();
  private waking = false;
  /** Waiting watches by the tick of their deadline. */
  private readonly deadlines = new Map<number, Set<Watch>>();
  private timer: NodeJS.Timeout | undefined;
  /** The tick the timer is set for (Infinity: none). */
  private timerTick = Infinity;
  private closed = false;

  /** Whether the replica stopped (polls answer at once). */
  get stopping(): boolean {
    return this.closed;
  }

  /**
   * Counts a poll of `userId` while it runs; over `limit` at once on this
   * replica, HTTP 429. Returns the function that ends it.
   */
  admit(userId: number, limit: number): () => void {
    return this.openByUser.admit(userId, limit);
  }

  /**
   * A wait for events of `userId`'s queue `queueId` (of `types`; undefined:
   * all): register it before looking for events, so that one arriving in
   * between still wakes it.
   */
  watch(userId: number, queueId: string, types: ReadonlySet<string> | undefined): Watch {
    const watch = new Watch(this, userId, queueId, types);
    const first = this.watchesByUser.get(userId);
    if (first !== undefined) {
      watch.next = first;
      first.prev = watch;
    }
    this.watchesByUser.set(userId, watch);
    return watch;
  }

  /** @internal Removes a finished watch from its user's list, its deadline and the wake list. */
  forget(watch: Watch): void {
    const { prev, next } = watch;
    if (prev !== undefined) prev.next = next;
    else if (next !== undefined) this.watchesByUser.set(watch.userId, next);
    else if (this.watchesByUser.get(watch.userId) === watch)
      this.watchesByUser.delete(watch.userId);
    if (next !== undefined) next.prev = prev;
    watch.prev = undefined;
    watch.next = undefined;
    if (watch.tick !== 0) {
      const set = this.deadlines.get(watch.tick);
      set?.delete(watch);
      if (set?.size === 0) this.deadlines.delete(watch.tick);
      watch.tick = 0;
      if (this.deadlines.size === 0) this.disarm();
    }
    this.toWake.delete(watch);
  }

  /** @internal Sets `watch` to expire at `deadline` (ms since the epoch). */
  schedule(watch: Watch, deadline: number): void {
    const tick = Math.ceil(deadline / TICK_MS);
    watch.tick = tick;
    let set = this.deadlines.get(tick);
    if (set === undefined) {
      set = new Set();
      this.deadlines.set(tick, set);
    }
    set.add(watch);
    if (tick < this.timerTick) this.arm(tick);
  }

  private disarm(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.timerTick = Infinity;
  }

  private arm(tick: number): void {
    clearTimeout(this.timer);
    this.timerTick = tick;
    this.timer = setTimeout(this.expire, Math.max(1, tick * TICK_MS - Date.now()));
  }

  /** Expires the watches whose deadline has passed, and sets the timer for the next ones. */
  private readonly expire = (): void => {
    this.timer = undefined;
    this.timerTick = Infinity;
    const now = Date.now();
    let next = Infinity;
    for (const [tick, set] of this.deadlines) {
      if (tick * TICK_MS <= now) for (const watch of set) watch.cancel();
      else if (tick < next) next = tick;
    }
    if (next !== Infinity) this.arm(next);
  };

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
        for (let watch = this.watchesByUser.get(userId); watch; watch = watch.next)
          if (watch.types === undefined || watch.types.has(event.event_type))
            this.toWake.add(watch);
    if (!this.waking && this.toWake.size > 0) {
      this.waking = true;
      setImmediate(this.wakeSlice);
    }
  }

  private readonly wakeSlice = (): void => {
    let woken = 0;
    for (const watch of this.toWake) {
      this.toWake.delete(watch);
      watch.wake();
      if (++woken === WAKE_SLICE) break;
    }
    if (this.toWake.size > 0) setImmediate(this.wakeSlice);
    else this.waking = false;
  };

  /** Every watch of this replica (a copy: waking one changes the lists). */
  private all(): Watch[] {
    const watches: Watch[] = [];
    for (const first of this.watchesByUser.values())
      for (let watch: Watch | undefined = first; watch; watch = watch.next) watches.push(watch);
    return watches;
  }

  /** Wakes the polls of queue `queueId` (deleted: they answer BAD_EVENT_QUEUE_ID). */
  wakeQueue(queueId: string): void {
    for (const watch of this.all()) if (watch.queueId === queueId) watch.wake();
  }

  /** Lets polls wait (the replica has started). */
  open(): void {
    this.closed = false;
  }

  /** Releases every waiting poll, and every later one at once (the replica stops). */
  close(): void {
    this.closed = true;
    for (const watch of this.all()) watch.wake();
    this.disarm();
  }
}
