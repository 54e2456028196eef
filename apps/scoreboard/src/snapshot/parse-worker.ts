/**
 * Worker entry: parses, validates and packs one fetched board off the event
 * loop, then hands the columns back without copying (transferred buffers).
 */
import { setPriority } from "node:os";
import { parentPort, workerData } from "node:worker_threads";
import { parseBoard, type FormatHint } from "./parse";

interface Job {
  /** The body in the blocks it was read into; joined here, off the event loop. */
  blocks: Uint8Array[];
  hint: FormatHint;
  /** This thread's nice value (PARSE_NICE in production). */
  nice: number;
}

const { blocks, hint, nice } = workerData as Job;

// The lowest CPU priority in production (Linux gives each thread its own nice
// value): on a small machine the parse then yields the core to the calls being
// answered. Where that is not allowed, it runs at normal priority.
try {
  setPriority(nice);
} catch {
  // not permitted here: parse at the normal priority
}

try {
  const columns = parseBoard(
    blocks.length === 1 && blocks[0] !== undefined ? blocks[0] : Buffer.concat(blocks),
    hint,
  );
  parentPort?.postMessage({ kind: "done", columns }, [
    columns.text.buffer as ArrayBuffer,
    columns.offsets.buffer as ArrayBuffer,
    columns.scores.buffer as ArrayBuffer,
    columns.foldHashes.buffer as ArrayBuffer,
    columns.foldOrder.buffer as ArrayBuffer,
  ]);
} catch (error) {
  const known = error instanceof Error && error.name === "BoardFormatError";
  parentPort?.postMessage({ kind: "failed", message: known ? error.message : String(error) });
}
