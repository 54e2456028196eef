import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { z } from "zod";

const run = promisify(execFile);

/** One HTTP/1.1 load run with autocannon, in a process of its own. */
export interface AutocannonOptions {
  url: string;
  method?: "GET" | "POST" | "PATCH";
  headers?: Record<string, string>;
  /** Request body, sent as is (set its content type in `headers`). */
  body?: string;
  connections: number;
  seconds: number;
  /** Requests per second over all connections; as fast as possible when absent. */
  rate?: number;
}

/** What one autocannon run measured. */
export interface HttpLoadResult {
  requestsPerSecond: number;
  /** Requests answered during the run. */
  requests: number;
  p50Ms: number;
  p99Ms: number;
  /** Answers other than 2xx, connection errors and timeouts. */
  failures: number;
}

/** The part of autocannon's `--json` report read here. */
const report = z.object({
  requests: z.object({ average: z.number(), total: z.number() }),
  latency: z.object({ p50: z.number(), p99: z.number() }),
  non2xx: z.number(),
  errors: z.number(),
  timeouts: z.number(),
});

/** The autocannon command line of `options` (exported for its tests). */
export function autocannonArgs(options: AutocannonOptions): string[] {
  const args = [
    "--json",
    "-c",
    String(options.connections),
    "-d",
    String(options.seconds),
    "-m",
    options.method ?? "GET",
  ];
  if (options.rate !== undefined) args.push("-R", String(options.rate));
  // autocannon splits a header at its first ':' or '='; names have neither.
  for (const [name, value] of Object.entries(options.headers ?? {}))
    args.push("-H", `${name}=${value}`);
  if (options.body !== undefined) args.push("-b", options.body);
  args.push(options.url);
  return args;
}

/** Runs autocannon (the npm package's CLI, under this Node) once. */
export async function autocannon(options: AutocannonOptions): Promise<HttpLoadResult> {
  const cli = require.resolve("autocannon/autocannon.js");
  const { stdout } = await run(process.execPath, [cli, ...autocannonArgs(options)], {
    maxBuffer: 16 * 1024 * 1024,
  });
  const last = stdout.trim().split("\n").at(-1) ?? "";
  const result = report.parse(JSON.parse(last));
  return {
    requestsPerSecond: result.requests.average,
    requests: result.requests.total,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    failures: result.non2xx + result.errors + result.timeouts,
  };
}

/** The version of autocannon the runs use. */
export function autocannonVersion(): string {
  const manifest = join(dirname(require.resolve("autocannon/autocannon.js")), "package.json");
  return (JSON.parse(readFileSync(manifest, "utf8")) as { version: string }).version;
}
