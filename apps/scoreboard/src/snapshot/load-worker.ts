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

/**
 * The parse runs at the lowest CPU priority in production (Linux gives each
 * thread its own nice value): on a small machine it then yields the core to
 * the calls being answered. The fetch before it stays at normal priority, so
 * that a refresh learns of an upstream that is down or slow as soon as it
 * would on the service's own thread. Where lowering is not allowed, the parse
 * runs at normal priority.
 */
function lowerPriority(): void {
  try {
    setPriority(nice);
  } catch {
    // not permitted here: parse at the normal priority
  }
}

const reply = (message: WorkerReply, transfer: ArrayBuffer[] = []): void =>
  parentPort?.postMessage(message, transfer);

loadBoard(source, since, timeoutMs, lowerPriority).then(
  (result) => {
    if (result.kind !== "data") reply(result);
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
