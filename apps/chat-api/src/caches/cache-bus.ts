import type { Tx } from "../db/kysely";
import type { Database } from "../db/database";
import type { Logger } from "pino";
import type { SqlRunner } from "../db/sql";
import { notify } from "../db/queries/events";

/** The database and the cache bus: what an action that changes cached rows needs. */
export interface DatabaseAndBus {
  db: Database;
  bus: CacheBus;
}

/** What changed, so every replica can drop what it cached about it. */
export type CacheChange = { user: number } | { realm: number };

/** The PostgreSQL NOTIFY channel of cache invalidations. */
export const CACHE_CHANNEL = "chat_cache";

/** Something that caches rows and can forget them. */
export interface Invalidatable {
  invalidate(change: CacheChange): void;
  /** Drops everything (changes may have been missed while the database was away). */
  clear(): void;
}

/**
 * Invalidation across replicas: a change is announced with NOTIFY inside the
 * transaction that makes it (so it goes out on commit, or never), and every
 * replica's LISTEN drops the cached rows. The replica that made the change also
 * drops them at once, without waiting for its own notification.
 */
export class CacheBus {
  private readonly caches: Invalidatable[] = [];
  private unlisten: (() => Promise<void>) | undefined;

  constructor(
    private readonly sql: SqlRunner,
    private readonly logger: Logger,
  ) {}

  /** Registers a cache to invalidate. */
  register(cache: Invalidatable): void {
    this.caches.push(cache);
  }

  /** Starts listening for other replicas' changes. */
  async start(): Promise<void> {
    this.unlisten = await this.sql.listen(
      CACHE_CHANNEL,
      (payload) => {
        const change = parseChange(payload);
        if (change === undefined)
          this.logger.warn({ payload }, "ignored a malformed cache notification");
        else this.apply(change);
      },
      () => {
        this.logger.info("listening for cache changes again: dropped every cached entry");
        for (const cache of this.caches) cache.clear();
      },
    );
  }

  /** Stops listening. */
  async stop(): Promise<void> {
    const unlisten = this.unlisten;
    this.unlisten = undefined;
    // A database that is already gone has stopped listening by itself.
    await unlisten?.().catch((error: unknown) =>
      this.logger.warn({ err: error }, "could not unlisten"),
    );
  }

  /** Announces `change` inside transaction `tx`; call {@link apply} after it commits. */
  async announce(tx: Tx, change: CacheChange): Promise<void> {
    await notify(tx, CACHE_CHANNEL, JSON.stringify(change));
  }

  /** Drops what this replica cached about `change`. */
  apply(change: CacheChange): void {
    for (const cache of this.caches) cache.invalidate(change);
  }
}

function parseChange(payload: string): CacheChange | undefined {
  try {
    const value = JSON.parse(payload) as Record<string, unknown>;
    if (typeof value.user === "number") return { user: value.user };
    if (typeof value.realm === "number") return { realm: value.realm };
  } catch {
    return undefined;
  }
  return undefined;
}
