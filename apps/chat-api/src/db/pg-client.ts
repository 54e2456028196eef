import { Client, type ClientConfig } from "pg";

/** What node-postgres runs itself, outside its promise API: a query with a callback, or a Submittable. */
function runsItself(args: readonly unknown[]): boolean {
  const first = args[0];
  return (
    typeof args.at(-1) === "function" ||
    (typeof first === "object" && first !== null && "submit" in first)
  );
}

/**
 * A node-postgres connection that sends one statement at a time. A
 * transaction's statements sent at once (a `Promise.all` of reads, by Kysely
 * or Prisma's adapter on the same connection) wait for the one before, in the
 * order they were sent, as node-postgres's own queue makes them wait today;
 * pg 8 warns that it deprecates that queue and pg 9 removes it. Queries with
 * a callback (the pool's own) go to node-postgres as they are.
 */
export class OneStatementAtATime extends Client {
  /** Made by the pool, with the pool's options. */
  constructor(config?: ClientConfig) {
    super(config);
    const send = Client.prototype.query.bind(this) as (...args: unknown[]) => unknown;
    let last: Promise<unknown> = Promise.resolve();
    const inTurn = (...args: unknown[]): unknown => {
      if (runsItself(args)) return send(...args);
      const mine = last.then(() => send(...args));
      last = mine.catch(() => undefined);
      return mine;
    };
    Object.defineProperty(this, "query", { value: inTurn, writable: true, configurable: true });
  }
}
