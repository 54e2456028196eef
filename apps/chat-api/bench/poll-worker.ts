/**
 * The long-polls of bench/realtime.ts, in a worker thread of their own (the
 * load of one process on one core would otherwise be the limit of what is
 * measured): each listener polls `GET /events` until told to stop, and
 * every delivered message is noted with its arrival time (Unix
 * milliseconds, comparable across threads).
 */
import { parentPort, workerData } from "node:worker_threads";
import { NO_ANSWER, type User, call, now } from "./load-realm";

/** What the worker polls for. */
export interface PollJob {
  listeners: { user: User; port: number; queue: string }[];
  /** Messages each listener should receive: the worker says `done` once all have (Infinity: never). */
  expected: number;
}

/** What the worker reports when told to stop. */
export interface PollReport {
  /** Per listener: message ids in arrival order, event ids in arrival order. */
  received: number[][];
  eventIds: number[][];
  /** Each delivery: message id and arrival (Unix ms). */
  arrivals: [number, number][];
  /** When each poll answer that carried at least one message arrived (Unix ms). */
  answerTimes: number[];
  errors: number;
  failures: string[];
  /** A message event as delivered (JSON). */
  sample: string | undefined;
}

/** The message from the main thread: stop and report. */
export interface ToWorker {
  type: "stop";
}
/**
 * Messages to the main thread: `ready` (every listener's first poll is sent),
 * `done` (every listener has all expected), `round` (every listener has
 * received N messages), then the report.
 */
export type FromWorker =
  | { type: "ready" }
  | { type: "done" }
  /** Every listener of the worker has received `count` messages. */
  | { type: "round"; count: number }
  | { type: "report"; report: PollReport };

function start(job: PollJob): void {
  const port = parentPort;
  if (port === null) throw new Error("poll-worker runs as a worker thread");
  const report: PollReport = {
    received: job.listeners.map(() => []),
    eventIds: job.listeners.map(() => []),
    arrivals: [],
    answerTimes: [],
    errors: 0,
    failures: [],
    sample: undefined,
  };
  const { expected } = job;
  const state = { stopping: false };
  const stopping = (): boolean => state.stopping;
  let complete = 0;
  /** How many listeners have received at least N messages, by N; and the last round told. */
  const reached: number[] = [];
  let round = 0;
  const noteReceived = (before: number, after: number) => {
    for (let n = before + 1; n <= after; n++) reached[n] = (reached[n] ?? 0) + 1;
    while ((reached[round + 1] ?? 0) === job.listeners.length) {
      round += 1;
      port.postMessage({ type: "round", count: round } satisfies FromWorker);
    }
  };
  const checkDone = () => {
    if (complete === job.listeners.length) port.postMessage({ type: "done" } satisfies FromWorker);
  };
  const polls = job.listeners.map(async ({ user, port: serverPort, queue }, i) => {
    let last = -1;
    let counted = false;
    const received = report.received[i] ?? [];
    while (!stopping()) {
      const reply = await call(serverPort, user, "GET", "/events", {
        queue_id: queue,
        last_event_id: String(last),
      }).catch((error: unknown) => {
        if (!stopping()) report.failures.push(`poll: ${String(error)}`);
        return NO_ANSWER;
      });
      if (stopping()) break;
      if (reply.status !== 200) {
        report.errors += 1;
        if (reply.status !== 0) report.failures.push(`poll: HTTP ${String(reply.status)}`);
        continue;
      }
      const at = now();
      const before = received.length;
      let carried = false;
      for (const event of (reply.json.events ?? []) as {
        id: number;
        type: string;
        message?: { id: number };
      }[]) {
        report.eventIds[i]?.push(event.id);
        last = Math.max(last, event.id);
        if (event.type !== "message" || event.message === undefined) continue;
        carried = true;
        report.sample ??= JSON.stringify(event);
        received.push(event.message.id);
        report.arrivals.push([event.message.id, at]);
      }
      if (carried) report.answerTimes.push(at);
      noteReceived(before, received.length);
      if (!counted && received.length >= expected) {
        counted = true;
        complete += 1;
        checkDone();
      }
    }
  });
  port.postMessage({ type: "ready" } satisfies FromWorker);
  port.once("message", (_message: ToWorker) => {
    state.stopping = true;
    // The last long-polls end with the heartbeat or the server's stop: not awaited
    // (the main thread ends this worker once it has the report).
    void Promise.all(polls);
    port.postMessage({ type: "report", report } satisfies FromWorker);
  });
}

if (parentPort !== null) start(workerData as PollJob);
