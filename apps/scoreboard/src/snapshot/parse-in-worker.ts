import { extname, join } from "node:path";
import { Worker } from "node:worker_threads";
import { BoardFormatError, type BoardColumns, type FormatHint } from "./parse";
import type { BoardBytes } from "./sources";

/** Parses boards: in a worker thread in production, or in-line where a test wants it. */
export type BoardParser = (bytes: BoardBytes, hint: FormatHint) => Promise<BoardColumns>;

type Reply = { kind: "done"; columns: BoardColumns } | { kind: "failed"; message: string };

const workerFile = join(__dirname, `parse-worker${extname(__filename)}`);
// Run from TypeScript sources (the tests), the worker compiles itself on load.
const workerExecArgv = workerFile.endsWith(".ts") ? ["--require", "@swc-node/register"] : [];

/** A private copy of `bytes` that can be transferred without detaching anyone else's memory. */
function ownedBuffer(bytes: Uint8Array): Uint8Array {
  if (bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength) return bytes;
  return new Uint8Array(bytes);
}

/** The worker thread's nice value in production: the lowest priority, so the parse yields the core to calls. */
export const PARSE_NICE = 19;

/**
 * A parser that parses one board in a fresh worker thread at nice value `nice`;
 * it rejects with {@link BoardFormatError} on bad data. Blocks of `bytes` that
 * own their whole buffer are transferred, not copied (the caller must not use
 * them afterwards), and joined in the worker.
 */
export const workerParser =
  (nice: number): BoardParser =>
  (bytes, hint) =>
    new Promise((resolve, reject) => {
      const blocks = (bytes instanceof Uint8Array ? [bytes] : bytes).map(ownedBuffer);
      const worker = new Worker(workerFile, {
        workerData: { blocks, hint, nice },
        transferList: blocks.map((block) => block.buffer as ArrayBuffer),
        execArgv: workerExecArgv,
      });
      let settled = false;
      worker.once("message", (reply: Reply) => {
        settled = true;
        if (reply.kind === "done") resolve(reply.columns);
        else reject(new BoardFormatError(reply.message));
        void worker.terminate();
      });
      worker.once("error", (error) => {
        settled = true;
        reject(error);
      });
      worker.once("exit", (code) => {
        if (!settled) reject(new Error(`board parser exited with code ${code}`));
      });
    });

/** The production parser: a worker thread at {@link PARSE_NICE}. */
export const parseInWorker: BoardParser = workerParser(PARSE_NICE);
