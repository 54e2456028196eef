/**
 * What one poll costs a server, and the bare `node:http` reference server
 * (bench/poll-reference.ts) to measure it on: the real-time benchmark
 * compares chat-api with it, and the load simulation reports it as the
 * yardstick of the machine's speed during its run (the same measure moved
 * threefold between runs on these shared machines).
 */
import { get } from "node:http";
import { join } from "node:path";
import { type Served, freePort, processSeconds, serve } from "@repo/bench-kit";
import { type User, authorization, call, registerMessageQueues } from "./load-realm";

const TS = ["--conditions=@repo/source", "--require", "@swc-node/register"];

/** The polls {@link pollCost} makes: by this many users, after a warm-up, each. */
export const POLL_COST = { users: 50, warmup: 100, polls: 400 };

/** What one poll costs a server, in its CPU. */
export interface PollCost {
  /** Microseconds of the server process's CPU (all its threads) per poll. */
  micros: number;
  polls: number;
  failures: number;
}

/**
 * {@link POLL_COST}'s polls on the server at `port` (process `pid`): each of
 * the users registers a queue and polls it without waiting, one poll after
 * the other, the users at once.
 */
export async function pollCost(
  port: number,
  pid: number | undefined,
  users: User[],
): Promise<PollCost> {
  const chosen = users.slice(0, POLL_COST.users);
  const queues = await registerMessageQueues(port, chosen, chosen.length);
  let failures = 0;
  const polls = (count: number) =>
    Promise.all(
      chosen.map(async (user, i) => {
        for (let n = 0; n < count; n++) {
          const reply = await call(port, user, "GET", "/events", {
            queue_id: queues[i] ?? "",
            last_event_id: "-1",
            dont_block: "true",
          });
          if (reply.status !== 200 || !Array.isArray(reply.json.events)) failures += 1;
        }
      }),
    );
  await polls(POLL_COST.warmup);
  const before = processSeconds(pid);
  await polls(POLL_COST.polls);
  const count = POLL_COST.polls * chosen.length;
  return { micros: ((processSeconds(pid) - before) * 1e6) / count, polls: count, failures };
}

/** Headers Node writes itself, or that differ per answer: left to the reference server. */
const OWN_HEADERS = new Set(["date", "connection", "keep-alive", "content-length"]);

/**
 * The headers of a chat-api poll answer (a `dont_block` poll of a new queue of
 * `user` on the server at `port`), as written: names in their case, in their
 * order, without those Node writes itself ({@link OWN_HEADERS}). The bare
 * reference answers with them (BENCH_HEADERS) to send the same bytes.
 */
export async function answerHeaders(port: number, user: User): Promise<[string, string][]> {
  const [queue] = await registerMessageQueues(port, [user]);
  const query = new URLSearchParams({
    queue_id: queue ?? "",
    last_event_id: "-1",
    dont_block: "true",
  });
  return new Promise((resolve, reject) => {
    get(
      {
        host: "127.0.0.1",
        port,
        path: `/api/v1/events?${query.toString()}`,
        headers: { host: "localhost", authorization: authorization(user) },
      },
      (res) => {
        res.resume();
        const pairs: [string, string][] = [];
        const raw = res.rawHeaders;
        for (let i = 0; i + 1 < raw.length; i += 2) {
          const name = raw[i] ?? "";
          if (!OWN_HEADERS.has(name.toLowerCase())) pairs.push([name, raw[i + 1] ?? ""]);
        }
        if (res.statusCode === 200) resolve(pairs);
        else reject(new Error(`poll: ${String(res.statusCode)}`));
      },
    ).on("error", reject);
  });
}

/**
 * A fresh bare reference server (its queues empty), which answers message
 * events like `sample` (a message event chat-api sent, as JSON), with
 * `headers` when given ({@link answerHeaders}: the same bytes as chat-api's
 * answers) or one header.
 */
export async function startBare(
  sample: string | undefined,
  headers?: [string, string][],
): Promise<Served> {
  const port = await freePort();
  return serve("node", [...TS, join(__dirname, "poll-reference.ts")], port, {
    PORT: String(port),
    BENCH_EVENT: sample ?? "{}",
    ...(headers === undefined ? {} : { BENCH_HEADERS: JSON.stringify(headers) }),
  });
}

/** Runs `measure` on a fresh bare reference server ({@link startBare}), and stops it after. */
export async function onBare<T>(
  sample: string | undefined,
  measure: (port: number, pid: number | undefined) => Promise<T>,
  headers?: [string, string][],
): Promise<T> {
  const reference = await startBare(sample, headers);
  const { port } = reference;
  try {
    return await measure(port, reference.child.pid);
  } finally {
    await reference.stop();
  }
}
