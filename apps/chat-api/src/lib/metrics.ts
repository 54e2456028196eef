import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";

/** chat-api's Prometheus metrics, in a registry of their own. */
export interface AppMetrics {
  readonly registry: Registry;
  readonly requests: Counter<"method" | "route" | "status">;
  readonly latency: Histogram<"method" | "route">;
  /** E-mails handed to the mail server, or refused by it (or unreachable). */
  readonly emails: Counter<"outcome">;
}

/** Database pool figures, read at scrape time. */
export interface PoolStats {
  total: number;
  idle: number;
  waiting: number;
}

/** Creates the metrics; `pool` reports the database pool when scraped. */
export function createMetrics(pool: () => PoolStats): AppMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const requests = new Counter({
    name: "chat_http_requests_total",
    help: "HTTP requests answered, by method, route template and status",
    labelNames: ["method", "route", "status"] as const,
    registers: [registry],
  });
  const latency = new Histogram({
    name: "chat_http_request_duration_seconds",
    help: "HTTP request latency, by method and route template",
    labelNames: ["method", "route"] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10],
    registers: [registry],
  });
  const gauge = (name: string, help: string, read: (stats: PoolStats) => number): void => {
    new Gauge({
      name,
      help,
      registers: [registry],
      collect() {
        this.set(read(pool()));
      },
    });
  };
  gauge("chat_db_pool_connections", "Database connections open", (s) => s.total);
  gauge("chat_db_pool_idle_connections", "Database connections idle", (s) => s.idle);
  gauge(
    "chat_db_pool_waiting_requests",
    "Queries waiting for a database connection",
    (s) => s.waiting,
  );
  const emails = new Counter({
    name: "chat_emails_total",
    help: "E-mails sent through the mail server (outcome=sent) or that failed to send (outcome=failed)",
    labelNames: ["outcome"] as const,
    registers: [registry],
  });
  return { registry, requests, latency, emails };
}
