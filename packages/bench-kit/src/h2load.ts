import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { quantile } from "./stats";

const run = promisify(execFile);

/** One load run: where, what to send, and how hard. */
export interface H2loadOptions {
  url: string;
  /** Request body (gRPC: the length-prefixed message); GET when absent. */
  body?: Uint8Array;
  headers?: Record<string, string>;
  seconds: number;
  warmUpSeconds: number;
  connections: number;
  /** Concurrent streams per connection. */
  streams: number;
  /** Requests per second per connection; as fast as possible when absent. */
  rate?: number;
  /** The status class every answer must have (3xx for revalidations); default 2xx. */
  okStatus?: "2xx" | "3xx";
  /** Run h2load on these CPUs only (taskset's list, e.g. "0"); anywhere when absent. */
  cpus?: string;
}

/** What one run measured. */
export interface LoadResult {
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  /** Responses with an HTTP status outside `okStatus` (h2load does not read grpc-status). */
  failures: number;
  /** Start time (ms, epoch) and latency (ms) of every request, for windowed figures. */
  samples: { startMs: number; latencyMs: number }[];
}

/** Runs h2load (Debian's nghttp2-client) once and reads its per-request log. */
export async function h2load(options: H2loadOptions): Promise<LoadResult> {
  const dir = await mkdtemp(join(tmpdir(), "h2load-"));
  try {
    const args = [
      "-D",
      String(options.seconds),
      "--warm-up-time",
      String(options.warmUpSeconds),
      "-c",
      String(options.connections),
      "-m",
      String(options.streams),
      "-t",
      "1",
      "--log-file",
      join(dir, "log"),
    ];
    if (options.rate !== undefined) args.push("--rps", String(options.rate));
    if (options.body !== undefined) {
      await writeFile(join(dir, "body"), options.body);
      args.push("-d", join(dir, "body"));
    }
    for (const [name, value] of Object.entries(options.headers ?? {}))
      args.push("-H", `${name}: ${value}`);
    args.push(options.url);
    const [command, commandArgs] =
      options.cpus === undefined
        ? ["h2load", args]
        : ["taskset", ["--cpu-list", options.cpus, "h2load", ...args]];
    const { stdout } = await run(command, commandArgs, { maxBuffer: 16 * 1024 * 1024 });
    const low = options.okStatus === "3xx" ? 300 : 200;
    const codes = /status codes: (\d+) 2xx, (\d+) 3xx, (\d+) 4xx, (\d+) 5xx/.exec(stdout);
    const failed = /requests: \d+ total, \d+ started, \d+ done, \d+ succeeded, (\d+) failed/.exec(
      stdout,
    );
    const samples = (await readFile(join(dir, "log"), "utf8"))
      .split("\n")
      .filter((line) => line !== "")
      .map((line) => line.split("\t").map(Number))
      .filter(([, status]) => status !== undefined && status >= low && status < low + 100)
      .map(([start = 0, , latency = 0]) => ({ startMs: start / 1000, latencyMs: latency / 1000 }));
    const latencies = samples.map((s) => s.latencyMs).sort((a, b) => a - b);
    const counts = [1, 2, 3, 4].map((i) => Number(codes?.[i] ?? 0)); // 2xx, 3xx, 4xx, 5xx
    const okClass = low === 300 ? 1 : 0;
    const notOk = counts.reduce((sum, n, i) => (i === okClass ? sum : sum + n), 0);
    return {
      requestsPerSecond: samples.length / options.seconds,
      p50Ms: quantile(latencies, 0.5),
      p99Ms: quantile(latencies, 0.99),
      failures: notOk + Number(failed?.[1] ?? 0),
      samples,
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Latency quantiles of the samples that started inside [fromMs, toMs). */
export function windowed(
  samples: LoadResult["samples"],
  fromMs: number,
  toMs: number,
): { count: number; p50Ms: number; p99Ms: number } {
  const latencies = samples
    .filter((s) => s.startMs >= fromMs && s.startMs < toMs)
    .map((s) => s.latencyMs)
    .sort((a, b) => a - b);
  return {
    count: latencies.length,
    p50Ms: quantile(latencies, 0.5),
    p99Ms: quantile(latencies, 0.99),
  };
}

/** Installs h2load from Debian's nghttp2-client when it is missing (the benchmarks run as root on these machines). */
export async function ensureH2load(): Promise<void> {
  try {
    await run("h2load", ["--version"]);
    return;
  } catch {
    process.stderr.write("h2load is missing: installing Debian's nghttp2-client\n");
  }
  const apt = { env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" } };
  await run("apt-get", ["update", "-q"], apt);
  await run("apt-get", ["install", "-y", "-q", "nghttp2-client"], apt);
}
