import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import type { SnapshotStore } from "./snapshot/store";

/** How one refresh ended. */
export type RefreshOutcome = "updated" | "not_modified" | "rejected" | "failed";

/** The service's Prometheus metrics, in a registry of their own. */
export interface ScoreboardMetrics {
  readonly registry: Registry;
  readonly requests: Counter<"method" | "code">;
  readonly latency: Histogram<"method">;
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
  const requests = new Counter({
    name: "scoreboard_requests_total",
    help: "RPCs answered, by method and status code",
    labelNames: ["method", "code"] as const,
    registers: [registry],
  });
  const latency = new Histogram({
    name: "scoreboard_request_duration_seconds",
    help: "RPC latency, by method",
    labelNames: ["method"] as const,
    buckets: [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
    registers: [registry],
  });
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
  return { registry, requests, latency, refreshes, refreshDuration };
}
