import {
  Counter,
  Gauge,
  Histogram,
  type MetricObjectWithValues,
  type MetricType,
  type MetricValueWithName,
  Registry,
  collectDefaultMetrics,
} from "prom-client";
import type { SnapshotStore } from "./snapshot/store";

/** How one refresh ended. */
export type RefreshOutcome = "updated" | "not_modified" | "rejected" | "failed";

/** Upper bounds of the RPC latency buckets, in seconds. */
const LATENCY_BUCKETS = [
  0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1,
];

/**
 * One method's answered calls and latencies, counted in plain fields: a call
 * allocates nothing to be counted (prom-client's `observe` and `inc` make a
 * label object and hash it at every call, even on a bound child). Published
 * when /metrics is scraped.
 */
export class MethodStats {
  /** Calls answered OK. */
  ok = 0;
  /** OK calls already added to prom-client's counter. */
  published = 0;
  /** Calls per latency bucket (the last: past the largest bound), not cumulative. */
  readonly buckets = new Float64Array(LATENCY_BUCKETS.length + 1);
  sum = 0;
  count = 0;

  constructor(readonly method: string) {}

  /** Counts one call's latency. */
  observe(seconds: number): void {
    let i = 0;
    while (i < LATENCY_BUCKETS.length && seconds > (LATENCY_BUCKETS[i] ?? Infinity)) i++;
    this.buckets[i] = (this.buckets[i] ?? 0) + 1;
    this.sum += seconds;
    this.count += 1;
  }
}

const LATENCY_NAME = "scoreboard_request_duration_seconds";
const LATENCY_HELP = "RPC latency, by method";
const BUCKET = `${LATENCY_NAME}_bucket`;

/** `scoreboard_request_duration_seconds`: the methods' latencies, read from their {@link MethodStats}. */
class LatencyHistogram extends Histogram<"method" | "le"> {
  constructor(
    registry: Registry,
    private readonly stats: ReadonlyMap<string, MethodStats>,
  ) {
    super({
      name: LATENCY_NAME,
      help: LATENCY_HELP,
      labelNames: ["method"],
      buckets: LATENCY_BUCKETS,
      registers: [registry],
    });
  }

  override get(): Promise<MetricObjectWithValues<MetricValueWithName<"method" | "le">>> {
    const values: MetricValueWithName<"method" | "le">[] = [];
    for (const { method, buckets, sum, count } of this.stats.values()) {
      let cumulative = 0;
      LATENCY_BUCKETS.forEach((bound, i) => {
        cumulative += buckets[i] ?? 0;
        values.push({ labels: { le: bound, method }, value: cumulative, metricName: BUCKET });
      });
      values.push(
        { labels: { le: "+Inf", method }, value: count, metricName: BUCKET },
        { labels: { method }, value: sum, metricName: `${LATENCY_NAME}_sum` },
        { labels: { method }, value: count, metricName: `${LATENCY_NAME}_count` },
      );
    }
    return Promise.resolve({
      name: LATENCY_NAME,
      help: LATENCY_HELP,
      // prom-client's typings name an enum here; its registry writes the type's own word.
      type: "histogram" as unknown as MetricType,
      aggregator: "sum",
      collect: () => undefined,
      values,
    });
  }

  /** What the registry reads for the text format: the same values (prom-client's own would be empty). */
  getForPromString(): Promise<MetricObjectWithValues<MetricValueWithName<"method" | "le">>> {
    return this.get();
  }
}

/** The service's Prometheus metrics, in a registry of their own. */
export interface ScoreboardMetrics {
  readonly registry: Registry;
  readonly requests: Counter<"method" | "code">;
  /** The counters of `method`'s calls (made on first use, kept). */
  methodStats(method: string): MethodStats;
  readonly refreshes: Counter<"outcome">;
  readonly refreshDuration: Histogram;
}

/** Creates the metrics; snapshot size and age are read from `store` at scrape time. */
export function createMetrics(
  store: SnapshotStore,
  now: () => number = Date.now,
): ScoreboardMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const stats = new Map<string, MethodStats>();
  const requests = new Counter({
    name: "scoreboard_requests_total",
    help: "RPCs answered, by method and status code",
    labelNames: ["method", "code"] as const,
    registers: [registry],
    // OK calls are counted in MethodStats, and added here when scraped.
    collect() {
      for (const method of stats.values()) {
        if (method.ok > method.published)
          this.inc({ method: method.method, code: "OK" }, method.ok - method.published);
        method.published = method.ok;
      }
    },
  });
  new LatencyHistogram(registry, stats);
  const methodStats = (method: string): MethodStats => {
    let found = stats.get(method);
    if (found === undefined) {
      found = new MethodStats(method);
      stats.set(method, found);
    }
    return found;
  };
  const refreshes = new Counter({
    name: "scoreboard_snapshot_refreshes_total",
    help: "Snapshot refreshes, by outcome (updated, not_modified, rejected, failed)",
    labelNames: ["outcome"] as const,
    registers: [registry],
  });
  const refreshDuration = new Histogram({
    name: "scoreboard_snapshot_refresh_duration_seconds",
    help: "Time from the start of a fetch to the swap of the new snapshot",
    buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  });
  new Gauge({
    name: "scoreboard_snapshot_entries",
    help: "Entries in the current snapshot (0 before the first load)",
    registers: [registry],
    collect() {
      this.set(store.current()?.total ?? 0);
    },
  });
  new Gauge({
    name: "scoreboard_snapshot_age_seconds",
    help: "Seconds since the current snapshot's data was fetched (-1 before the first load)",
    registers: [registry],
    collect() {
      const snapshot = store.current();
      this.set(snapshot === undefined ? -1 : now() / 1000 - Number(snapshot.fetchedAt));
    },
  });
  return { registry, requests, methodStats, refreshes, refreshDuration };
}
