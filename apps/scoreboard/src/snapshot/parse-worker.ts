/**
 * Worker entry: parses, validates and packs one fetched board off the event
 * loop, then hands the columns back without copying (transferred buffers).
 */
import { parentPort, workerData } from "node:worker_threads";
import { parseBoard, type FormatHint } from "./parse";

interface Job {
  bytes: Uint8Array;
  hint: FormatHint;
}

const { bytes, hint } = workerData as Job;
try {
  const columns = parseBoard(bytes, hint);
  parentPort?.postMessage({ kind: "done", columns }, [
    columns.text.buffer as ArrayBuffer,
    columns.chunkEnds.buffer as ArrayBuffer,
    columns.offsets.buffer as ArrayBuffer,
    columns.scores.buffer as ArrayBuffer,
  ]);
} catch (error) {
  const known = error instanceof Error && error.name === "BoardFormatError";
  parentPort?.postMessage({ kind: "failed", message: known ? error.message : String(error) });
}
