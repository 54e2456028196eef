/**
 * Worker entry: runs one load in a loading process of its own
 * (`load-in-child.ts`: the fetch, the parse and its garbage) and reads the
 * columns it sends back here, off the service's thread, then hands them to
 * the service's thread without copying (a transferred buffer). Reading them
 * is a copy into fresh memory, whose first touch costs a page fault per 4 KB:
 * 270 ms for the 86 MB of a 1,000,000-entry board on this project's machines
 * against 6 ms for the copy itself, paid here at the lowest CPU priority.
 */
import { setPriority } from "node:os";
import { parentPort, workerData } from "node:worker_threads";
import { columnBuffers } from "./load";
import { childLoader } from "./load-in-child";
import { BoardFormatError } from "./parse";
import type { LoadJob, LoadReply } from "./load-reply";

const { source, since, timeoutMs, nice } = workerData as LoadJob;

const reply = (message: LoadReply, transfer: ArrayBuffer[] = []): void =>
  parentPort?.postMessage(message, transfer);

// The loading process starts at this thread's priority: normal, for its fetch
// (it lowers its own for the parse). Only then does this thread lower its own.
const loading = childLoader(nice)(source, since, timeoutMs);
try {
  setPriority(nice);
} catch {
  // not permitted here: read at the normal priority
}

loading.then(
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
