import type { DescMethod } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import type { Logger } from "pino";
import type { MethodStats, ScoreboardMetrics } from "./metrics";

/** `NotFound` -> `NOT_FOUND`: gRPC's own spelling, for metric labels. */
export function codeName(code: Code | undefined): string {
  return code === undefined ? "OK" : Code[code].replace(/(?<=[a-z])(?=[A-Z])/g, "_").toUpperCase();
}

/** One call under way: ends exactly once, as one of these. */
export interface Call {
  /** Answered. */
  ok(): void;
  /** Answered 304 from the client's cached copy (Connect GET). */
  notModified(): void;
  /**
   * Failed with `error`; returns what the client may see: a ConnectError as it
   * is, anything else logged and masked as a bare INTERNAL.
   */
  fail(error: unknown): ConnectError;
}

/** Starts recording a call of `method`. */
export type CallRecorder = (method: DescMethod) => Call;

/**
 * One call being recorded. A class, not closures: a call makes one small
 * object and nothing else (the fast lane answers tens of thousands a second).
 */
class RecordedCall implements Call {
  private ended = false;
  private readonly started = performance.now();

  constructor(
    private readonly series: MethodStats,
    private readonly metrics: ScoreboardMetrics,
    private readonly logger: Logger,
  ) {}

  /** Ends the call once: its latency observed; false if it had ended already. */
  private end(): boolean {
    if (this.ended) return false;
    this.ended = true;
    this.series.observe((performance.now() - this.started) / 1000);
    return true;
  }

  ok(): void {
    if (this.end()) this.series.ok += 1;
  }

  notModified(): void {
    if (this.end()) this.metrics.requests.inc({ method: this.series.method, code: "NOT_MODIFIED" });
  }

  fail(error: unknown): ConnectError {
    const known = error instanceof ConnectError ? error : undefined;
    if (this.end()) {
      if (known === undefined)
        this.logger.error({ err: error, method: this.series.method }, "unexpected error in a call");
      this.metrics.requests.inc({
        method: this.series.method,
        code: codeName(known?.code ?? Code.Internal),
      });
    }
    return known ?? new ConnectError("internal error", Code.Internal);
  }
}

/**
 * The one recording of every call, on every path (the gRPC fast lane, the
 * connect-es routes and the 304 shortcut): its latency, its outcome by status
 * code, and the logging and masking of unexpected errors. Labels come from the
 * method's descriptor, never from a URL, so the series are the service's own
 * methods times the status codes and nothing a client sends can add one.
 */
export function createCallRecorder({
  metrics,
  logger,
}: {
  metrics: ScoreboardMetrics;
  logger: Logger;
}): CallRecorder {
  return (method) => new RecordedCall(metrics.methodStats(method.name), metrics, logger);
}
