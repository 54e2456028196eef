import type { Logger } from "pino";
import type { RefreshOutcome, ScoreboardMetrics } from "../metrics";
import { BoardFormatError } from "./parse";
import type { BoardLoader } from "./load";
import { loadInWorker } from "./load-in-worker";
import { Snapshot } from "./snapshot";
import type { BoardSource, Validators } from "./sources";
import type { SnapshotStore } from "./store";

/** What the refresher needs; tests pass their own clock, parser and periods. */
export interface RefresherOptions {
  source: BoardSource;
  store: SnapshotStore;
  logger: Logger;
  metrics: ScoreboardMetrics;
  /** Refresh period after a success. */
  periodMs: number;
  /** Time limit of one fetch (headers and body). */
  timeoutMs: number;
  /** Reject a board that shrank by more than this fraction of the current one. */
  maxShrink: number;
  /** First retry delay after a failure; doubles per consecutive failure, capped by the period. */
  minBackoffMs?: number;
  /** Relative jitter of every delay (0.1 = +/-10 %). */
  jitter?: number;
  /** Fetches and parses; a worker thread and a process of its own by default. */
  load?: BoardLoader;
  now?: () => number;
}

/**
 * Loads the board, then refreshes it on a timer: one fetch at a time, with a
 * time limit, conditional HTTP requests and exponential backoff on failure.
 * A fetch that fails or brings bad data leaves the current snapshot serving.
 */
export class Refresher {
  private timer: NodeJS.Timeout | undefined;
  private inFlight: Promise<RefreshOutcome> | undefined;
  private failures = 0;
  private validators: Validators = {};
  /** The `fetched_at` the data last accepted gave itself (a JSON wrapper's), if any. */
  private ownFetchedAt: bigint | null = null;
  private stopped = false;
  private readonly load: BoardLoader;
  private readonly now: () => number;

  constructor(private readonly options: RefresherOptions) {
    this.load = options.load ?? loadInWorker;
    this.now = options.now ?? Date.now;
  }

  /** Starts loading now and keeps refreshing until {@link stop}. */
  start(): void {
    this.stopped = false;
    void this.refresh();
  }

  /** Stops the timer; a refresh under way finishes but schedules no other. */
  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  /** Refreshes now, or joins the refresh already under way. */
  refresh(): Promise<RefreshOutcome> {
    this.inFlight ??= this.runOnce().finally(() => {
      this.inFlight = undefined;
    });
    return this.inFlight;
  }

  private async runOnce(): Promise<RefreshOutcome> {
    const { source, store, logger, metrics, timeoutMs } = this.options;
    clearTimeout(this.timer);
    const started = this.now();
    let outcome: RefreshOutcome;
    try {
      const result = await this.load(source, this.validators, timeoutMs);
      const fetchedAt = BigInt(Math.floor(this.now() / 1000));
      const current = store.current();
      if (result.kind !== "data") {
        if (current === undefined) throw new Error("the source reported no change before any data");
        // A 304 dates the data at this fetch; unchanged bytes keep the date they give
        // themselves, as reading them again would.
        const at = result.kind === "unchanged" ? (this.ownFetchedAt ?? fetchedAt) : fetchedAt;
        store.swap(current.refetched(at));
        outcome = "not_modified";
      } else {
        const { columns } = result;
        this.checkShrink(columns.count, current);
        const at = columns.fetchedAt === null ? fetchedAt : BigInt(columns.fetchedAt);
        const next =
          current?.digest === columns.digest
            ? current.refetched(at)
            : await Snapshot.build(columns, at);
        store.swap(next);
        this.validators = result.validators;
        this.ownFetchedAt = columns.fetchedAt === null ? null : BigInt(columns.fetchedAt);
        outcome = "updated";
      }
      this.failures = 0;
      const snapshot = store.current();
      logger.info(
        {
          outcome,
          source: source.description,
          entries: snapshot?.total,
          fetchedAt: Number(snapshot?.fetchedAt),
          ms: this.now() - started,
        },
        "scoreboard refreshed",
      );
    } catch (error) {
      this.failures += 1;
      outcome = error instanceof BoardFormatError ? "rejected" : "failed";
      logger.warn(
        {
          outcome,
          source: source.description,
          reason: error instanceof Error ? error.message : String(error),
          failures: this.failures,
          serving: store.current() === undefined ? "nothing yet" : "last good snapshot",
        },
        "scoreboard refresh failed",
      );
    }
    metrics.refreshes.inc({ outcome });
    metrics.refreshDuration.observe((this.now() - started) / 1000);
    this.schedule();
    return outcome;
  }

  private checkShrink(count: number, current: Snapshot | undefined): void {
    if (current === undefined) return;
    const floor = current.total * (1 - this.options.maxShrink);
    if (count < floor) {
      throw new BoardFormatError(
        `board shrank from ${current.total} to ${count} entries (more than ${this.options.maxShrink * 100} %)`,
      );
    }
  }

  private schedule(): void {
    if (this.stopped) return;
    const { periodMs, minBackoffMs = 1000, jitter = 0.1, store } = this.options;
    const base =
      this.failures === 0 ? periodMs : Math.min(periodMs, minBackoffMs * 2 ** (this.failures - 1));
    const delay = Math.max(0, Math.round(base * (1 + jitter * (2 * Math.random() - 1))));
    store.nextRefreshAt = this.now() + delay;
    this.timer = setTimeout(() => void this.refresh(), delay);
    this.timer.unref();
  }
}
