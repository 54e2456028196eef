import type { DescMethod } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import type { Counter, Histogram } from "prom-client";
import type { Logger } from "pino";
import type { ScoreboardMetrics } from "./metrics";

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
  // Metric children bound once per method: no label hashing on the hot paths.
  const bound = new Map<
    DescMethod,
    { latency: Histogram.Internal<"method">; ok: Counter.Internal }
  >();
  const children = (method: DescMethod) => {
    let found = bound.get(method);
    if (found === undefined) {
      found = {
        latency: metrics.latency.labels({ method: method.name }),
        ok: metrics.requests.labels({ method: method.name, code: "OK" }),
      };
      bound.set(method, found);
    }
    return found;
  };
  return (method) => {
    const { latency, ok } = children(method);
    const stopTimer = latency.startTimer();
    let ended = false;
    const end = (): boolean => {
      if (ended) return false;
      ended = true;
      stopTimer();
      return true;
    };
    return {
      ok() {
        if (end()) ok.inc();
      },
      notModified() {
        if (end()) metrics.requests.inc({ method: method.name, code: "NOT_MODIFIED" });
      },
      fail(error) {
        const known = error instanceof ConnectError ? error : undefined;
        if (end()) {
          if (known === undefined)
            logger.error({ err: error, method: method.name }, "unexpected error in a call");
          metrics.requests.inc({
            method: method.name,
            code: codeName(known?.code ?? Code.Internal),
          });
        }
        return known ?? new ConnectError("internal error", Code.Internal);
      },
    };
  };
}
