import { spawn } from "node:child_process";
import { extname, join } from "node:path";
import type { Readable } from "node:stream";
import { type BoardLoader, LoadFailure } from "./load";
import { type LoadJob, LOAD_JOB_VARIABLE, readReply } from "./load-reply";
import { BoardFormatError } from "./parse";

const childFile = join(__dirname, `load-child${extname(__filename)}`);
/**
 * The loading process's Node flags: its garbage collector on its own main
 * thread, which lowers its priority for the parse (so the collections of a
 * large board's parse run at that priority too). Run from TypeScript sources
 * (the tests), it compiles itself on load.
 */
const childExecArgv = [
  "--single-threaded-gc",
  ...(childFile.endsWith(".ts") ? ["--require", "@swc-node/register"] : []),
];

/** The loading process's nice value in production: the lowest priority, so the parse yields the core to calls. */
export const LOAD_NICE = 19;

/**
 * A loader that fetches and parses one board in a fresh Node process whose
 * parse runs at nice value `nice`: the body, the parse and the index are all
 * made there, and only the finished columns come back, over a pipe. A process
 * rather than a worker thread: V8's collector threads are shared by every
 * thread of a process, so a worker's collections of a large board (a heap of
 * hundreds of MB) ran at normal priority beside the service's and held up its
 * small ones, unless the whole service collected single-threaded, which cost
 * its calls the second core's help.
 */
export const childLoader =
  (nice: number): BoardLoader =>
  (source, since, timeoutMs) => {
    const job: LoadJob = { source, since, timeoutMs, nice };
    const child = spawn(process.execPath, [...childExecArgv, childFile], {
      env: { ...process.env, [LOAD_JOB_VARIABLE]: JSON.stringify(job) },
      // The reply comes on descriptor 3; what the process prints goes where the service's does.
      stdio: ["ignore", "inherit", "inherit", "pipe"],
    });
    // How the process ended, when that is what went wrong: undefined for a clean exit.
    const ended = new Promise<string | undefined>((resolve) => {
      child.once("exit", (code, signal) =>
        resolve(
          code === 0
            ? undefined
            : signal === null
              ? `the loading process exited with code ${code}`
              : `the loading process was stopped by ${signal}`,
        ),
      );
      child.once("error", (error) => resolve(`the loading process failed: ${error.message}`));
    });
    // Settled only once the process is gone, so that it is reaped by the
    // thread that started it (a worker's, in production, which ends after).
    return readReply(child.stdio[3] as Readable).then(
      async (reply) => {
        await ended;
        if (reply.kind === "rejected") throw new BoardFormatError(reply.message);
        if (reply.kind === "failed") throw new LoadFailure(reply.message);
        return reply;
      },
      async (error: unknown) => {
        const reason = await ended;
        throw reason === undefined ? error : new LoadFailure(reason);
      },
    );
  };
