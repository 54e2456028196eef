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
