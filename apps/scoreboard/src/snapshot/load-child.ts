/**
 * The loading process's entry: fetches, parses, validates and packs one board
 * away from the service's process, then writes the columns back on file
 * descriptor 3 ({@link writeReply}). The service never holds the fetched body,
 * and this process's garbage collections, of a heap of hundreds of MB for a
 * large board, are its own: they never share a thread with the service's.
 */
import { setPriority } from "node:os";
import { Socket } from "node:net";
import { loadBoard } from "./load";
import { type LoadJob, LOAD_JOB_VARIABLE, writeReply } from "./load-reply";
import { BoardFormatError } from "./parse";

const job = JSON.parse(process.env[LOAD_JOB_VARIABLE] ?? "null") as LoadJob;
const channel = new Socket({ fd: 3, readable: true, writable: true });
// The service's end closes before the reply is whole only when the service
// stopped or died: nobody is left to read the board.
channel.on("end", () => process.exit(1));
channel.on("error", () => process.exit(1));
channel.resume();
/** Once the reply's last byte is in the pipe (the reader gets it all after this process is gone). */
const done = (): never => process.exit(0);

/**
 * The parse runs at the lowest CPU priority in production (Linux gives each
 * thread its own nice value; this process collects its garbage on its main
 * thread, `--single-threaded-gc`): on a small machine it then yields the core
 * to the calls being answered. The fetch before it stays at normal priority,
 * so that a refresh learns of an upstream that is down or slow as soon as it
 * would in the service. Where lowering is not allowed, the parse runs at
 * normal priority.
 */
function lowerPriority(): void {
  try {
    setPriority(job.nice);
  } catch {
    // not permitted here: parse at the normal priority
  }
}

loadBoard(job.source, job.since, job.timeoutMs, lowerPriority).then(
  (result) => {
    writeReply(channel, result, done);
  },
  (error: unknown) => {
    const message = error instanceof Error ? error.message : String(error);
    const kind = error instanceof BoardFormatError ? "rejected" : "failed";
    writeReply(channel, { kind, message }, done);
  },
);
