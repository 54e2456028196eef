import { extname, join } from "node:path";
import { Worker } from "node:worker_threads";
import { type BoardLoader, LoadFailure, type LoadResult } from "./load";
import { BoardFormatError } from "./parse";

/** What the loading worker posts back: its result, or why it failed. */
export type WorkerReply =
  LoadResult | { kind: "rejected"; message: string } | { kind: "failed"; message: string };

const workerFile = join(__dirname, `load-worker${extname(__filename)}`);
// Run from TypeScript sources (the tests), the worker compiles itself on load.
const workerExecArgv = workerFile.endsWith(".ts") ? ["--require", "@swc-node/register"] : [];

/** The worker thread's nice value in production: the lowest priority, so the load yields the core to calls. */
export const LOAD_NICE = 19;

/**
 * A loader that fetches and parses one board in a fresh worker thread at nice
 * value `nice`: the body, the parse and the index are all made there, and only
 * the finished columns come back (transferred, not copied).
 */
export const workerLoader =
  (nice: number): BoardLoader =>
  (source, since, timeoutMs) =>
    new Promise((resolve, reject) => {
      const worker = new Worker(workerFile, {
        workerData: { source, since, timeoutMs, nice },
        execArgv: workerExecArgv,
      });
      let settled = false;
      worker.once("message", (reply: WorkerReply) => {
        settled = true;
        if (reply.kind === "rejected") reject(new BoardFormatError(reply.message));
        else if (reply.kind === "failed") reject(new LoadFailure(reply.message));
        else resolve(reply);
        void worker.terminate();
      });
      worker.once("error", (error) => {
        settled = true;
        reject(error);
      });
      worker.once("exit", (code) => {
        if (!settled) reject(new Error(`board loader exited with code ${code}`));
      });
    });

/** The production loader: a worker thread at {@link LOAD_NICE}. */
export const loadInWorker: BoardLoader = workerLoader(LOAD_NICE);
