/**
 * Worker entry: fetches, parses, validates and packs one board off the event
 * loop, then hands the columns back without copying (transferred buffers). The
 * service's thread never holds the fetched body.
 */
import { setPriority } from "node:os";
import { parentPort, workerData } from "node:worker_threads";
import { columnBuffers, loadBoard } from "./load";
import { BoardFormatError } from "./parse";
import type { BoardSource, Validators } from "./sources";
import type { WorkerReply } from "./load-in-worker";

interface Job {
  source: BoardSource;
  since: Validators;
  timeoutMs: number;
  /** This thread's nice value (LOAD_NICE in production). */
  nice: number;
}

const { source, since, timeoutMs, nice } = workerData as Job;

// The lowest CPU priority in production (Linux gives each thread its own nice
// value): on a small machine the load then yields the core to the calls being
// answered. Where that is not allowed, it runs at normal priority.
try {
  setPriority(nice);
} catch {
  // not permitted here: load at the normal priority
}

const reply = (message: WorkerReply, transfer: ArrayBuffer[] = []): void =>
  parentPort?.postMessage(message, transfer);

loadBoard(source, since, timeoutMs).then(
  (result) => {
    if (result.kind === "not-modified") reply({ kind: "not-modified" });
    else
      reply(
        { kind: "data", columns: result.columns, validators: result.validators },
        columnBuffers(result.columns),
      );
  },
  (error: unknown) => {
    const message = error instanceof Error ? error.message : String(error);
    reply({ kind: error instanceof BoardFormatError ? "rejected" : "failed", message });
  },
);
