import { ErrorCode, JsonableError } from "@repo/envelope";

/**
 * At most `slots` of the works given run at once; the rest wait their turn
 * in order. Past `queue` waiting, a work is refused at once with `busy()`.
 */
export function concurrencyLimit(
  slots: number,
  queue = Infinity,
  busy: () => Error = () => new Error("too many waiting"),
): <T>(work: () => Promise<T>) => Promise<T> {
  let running = 0;
  const waiting: (() => void)[] = [];
  return async <T>(work: () => Promise<T>): Promise<T> => {
    if (running >= slots) {
      if (waiting.length >= queue) throw busy();
      await new Promise<void>((resolve) => waiting.push(resolve));
    } else running++;
    try {
      return await work();
    } finally {
      // The slot passes to the next in line, or is freed.
      const next = waiting.shift();
      if (next === undefined) running--;
      else next();
    }
  };
}

/**
 * Counts what each user has in flight on this replica (long-polls,
 * registrations): one more than `limit` at once is HTTP 429 with
 * `Retry-After: 1`, naming `what`.
 */
export class InFlightByUser {
  private readonly open = new Map<number, number>();

  constructor(private readonly what: string) {}

  /** Counts one of `userId`'s while it runs; over `limit`, throws the 429. Returns the function that ends it. */
  admit(userId: number, limit: number): () => void {
    const open = this.open.get(userId) ?? 0;
    if (open >= limit) {
      throw new JsonableError(
        `Too many ${this.what} at once for this user (limit: ${String(limit)}).`,
        ErrorCode.RATE_LIMIT_HIT,
        429,
        { "retry-after": 1 },
        { "Retry-After": "1" },
      );
    }
    this.open.set(userId, open + 1);
    let done = false;
    return () => {
      if (done) return;
      done = true;
      const left = (this.open.get(userId) ?? 1) - 1;
      if (left === 0) this.open.delete(userId);
      else this.open.set(userId, left);
    };
  }
}

/**
 * Each user's share of the server on this replica: at most `slots` of their
 * requests run at once (each holds at most a database connection or a few,
 * so one person never holds the pool); the next `queue` wait their turn in
 * order; one more is HTTP 429 with `Retry-After: 1`. Another person's
 * requests never wait behind theirs.
 */
export class UserShare {
  private readonly users = new Map<number, { running: number; waiting: (() => void)[] }>();

  constructor(
    private readonly slots: number,
    private readonly queue: number,
  ) {}

  /** Runs `work` within `userId`'s share. */
  async run<T>(userId: number, work: () => Promise<T>): Promise<T> {
    let share = this.users.get(userId);
    if (share === undefined) {
      share = { running: 0, waiting: [] };
      this.users.set(userId, share);
    }
    if (share.running >= this.slots) {
      if (share.waiting.length >= this.queue)
        throw new JsonableError(
          `Too many requests at once for this user (limit: ${String(this.slots)} running, ${String(this.queue)} waiting).`,
          ErrorCode.RATE_LIMIT_HIT,
          429,
          { "retry-after": 1 },
          { "Retry-After": "1" },
        );
      const waiting = share.waiting;
      await new Promise<void>((resolve) => waiting.push(resolve));
    } else share.running++;
    try {
      return await work();
    } finally {
      const next = share.waiting.shift();
      if (next !== undefined) next();
      else if (--share.running === 0) this.users.delete(userId);
    }
  }
}

/** How one due item's delivery went: sent, failed for good, or taken by another replica. */
export type DeliveryOutcome = "sent" | "failed" | "taken";

/**
 * Delivers due items in rounds until none is due or `budgetMs` has passed:
 * `round()` answers the ids of one round (one per owner, so that an owner
 * with hundreds due delays nobody by more than a round), `deliver(id)` each
 * one in its own transaction. Stops early when a whole round was taken by
 * other replicas (they deliver it). Answers how many were sent.
 */
export async function deliverInRounds(
  round: () => Promise<number[]>,
  deliver: (id: number) => Promise<DeliveryOutcome>,
  budgetMs: number,
): Promise<number> {
  const deadline = Date.now() + budgetMs;
  let sent = 0;
  while (Date.now() < deadline) {
    const ids = await round();
    if (ids.length === 0) break;
    let progress = false;
    for (const id of ids) {
      const outcome = await deliver(id);
      if (outcome === "sent") sent++;
      if (outcome !== "taken") progress = true;
      if (Date.now() >= deadline) break;
    }
    if (!progress) break;
  }
  return sent;
}
