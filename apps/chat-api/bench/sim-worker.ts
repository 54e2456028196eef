/**
 * A share of bench/simulate.ts's simulated users, in a worker thread of the
 * load process: one thread's event loop, busy with thousands of long-polls'
 * answers, delayed every request it timed (its p99 reached 124 ms), so the
 * users are spread over threads. The main thread says who joins and when,
 * and collects what the users did and saw ({@link tally}) at the end of
 * every step; who has registered is shared by all threads
 * ({@link SharedRoster}).
 */
import { monitorEventLoopDelay } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import { parentPort, workerData } from "node:worker_threads";
import { agent } from "./load-realm";
import { type Done, type SharedRoster, SimUser, World, tally } from "./sim-users";

/** What a worker is given: the realm, the servers, the shared roster. */
export interface SimJob {
  roster: SharedRoster;
  channels: number[];
  subscriptions: number[][];
  actionSeconds: number;
  /** The servers' ports: user `i` uses `ports[i % ports.length]`. */
  ports: number[];
}

/** What the main thread asks. */
export type ToSimWorker =
  /** Start these users, each after its delay (ms); answered by `joined`. */
  | { type: "join"; joins: { index: number; delayMs: number }[] }
  /** Hand over what was noted since the last `collect`. */
  | { type: "collect" }
  /** No more actions (the long-polls go on). */
  | { type: "quiet" }
  /** The end: what fails from now on is not counted. */
  | { type: "stopping" };

/** What this thread noted since the last collection. */
export interface Collected {
  requests: Done[];
  arrivals: { message: number; user: number; at: number }[];
  sends: [number, { at: number; audience: readonly number[] }][];
  failures: string[];
  pollFailures: number;
  /** Sends under way now. */
  sendsInFlight: number;
  /** Event ids out of order, in all, since the start. */
  disordered: number;
  /** This thread's event-loop delay p99 since the last collection, ms. */
  loopP99: number;
}

/** The answers. */
export type FromSimWorker = { type: "joined" } | { type: "collected"; collected: Collected };

function start(job: SimJob): void {
  const port = parentPort;
  if (port === null) throw new Error("sim-worker runs as a worker thread");
  const world = new World(job.channels, job.subscriptions, job.actionSeconds, job.roster);
  const loop = monitorEventLoopDelay({ resolution: 10 });
  loop.enable();
  port.on("message", (message: ToSimWorker) => {
    switch (message.type) {
      case "join": {
        const joining = message.joins.flatMap(({ index, delayMs }) => {
          const user = job.roster.people[index];
          if (user === undefined) return [];
          const simUser = new SimUser(index, user, job.ports[index % job.ports.length] ?? 0, world);
          world.users.push(simUser);
          return [sleep(delayMs).then(() => simUser.start())];
        });
        void Promise.all(joining).then(() =>
          port.postMessage({ type: "joined" } satisfies FromSimWorker),
        );
        return;
      }
      case "collect": {
        const collected: Collected = {
          requests: tally.requests.splice(0),
          arrivals: tally.arrivals.splice(0),
          sends: [...tally.sends],
          failures: [...tally.failures],
          pollFailures: tally.pollFailures,
          sendsInFlight: tally.sendsInFlight,
          disordered: world.users.reduce((n, u) => n + u.disordered, 0),
          loopP99: loop.percentile(99) / 1e6,
        };
        tally.sends.clear();
        tally.failures.clear();
        tally.pollFailures = 0;
        loop.reset();
        port.postMessage({ type: "collected", collected } satisfies FromSimWorker);
        return;
      }
      case "quiet":
        for (const user of world.users) user.stop();
        return;
      case "stopping":
        tally.stopping = true;
        for (const user of world.users) user.stop();
        loop.disable();
        void agent.close();
        return;
    }
  });
}

if (parentPort !== null) start(workerData as SimJob);
