import { extname, join } from "node:path";
import { Worker } from "node:worker_threads";
import { type BoardLoader, LoadFailure } from "./load";
import { LOAD_NICE } from "./load-in-child";
import type { LoadJob, LoadReply } from "./load-reply";
import { BoardFormatError } from "./parse";

const workerFile = join(__dirname, `load-worker${extname(__filename)}`);
// Run from TypeScript sources (the tests), the worker compiles itself on load.
const workerExecArgv = workerFile.endsWith(".ts") ? ["--require", "@swc-node/register"] : [];

/**
 * A loader that runs each load in a fresh worker thread, which starts a
 * loading process (`load-in-child.ts`) for the fetch and the parse, reads the
 * columns it sends back, and hands them to this thread transferred, not
 * copied: this thread neither holds the fetched body nor touches a page of
 * the new columns before it serves them. `nice` is the priority of the
 * process's parse and of the worker's reading (`LOAD_NICE` in production).
 */
export const workerLoader =
  (nice: number): BoardLoader =>
  (source, since, timeoutMs) =>
    new Promise((resolve, reject) => {
      const job: LoadJob = { source, since, timeoutMs, nice };
      const worker = new Worker(workerFile, {
        workerData: job,
        execArgv: workerExecArgv,
      });
      let settled = false;
      worker.once("message", (reply: LoadReply) => {
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

/** The production loader: a worker thread and a loading process at {@link LOAD_NICE}. */
export const loadInWorker: BoardLoader = workerLoader(LOAD_NICE);
