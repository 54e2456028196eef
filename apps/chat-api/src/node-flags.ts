/**
 * The Node (V8) flags chat-api runs with: `pnpm start` and the image's
 * ENTRYPOINT pass them (a test checks both against this list), as do the
 * benchmarks.
 *
 * `--max-semi-space-size=64`: the young generation's halves may grow to
 * 64 MB (V8's default here: 16 MB). Every request allocates short-lived
 * objects (the request and answer, their headers, the log line, promises),
 * and a long-poll lives for a message's round trip: with small halves,
 * scavenges ran often enough to copy waiting polls' objects into the old
 * generation. At the one-sender ceiling (1,000 long-polls), poll answers
 * per second rose 15 % (a median of 5,920/s against 5,160/s over six runs
 * each), for about 50 MB more resident memory at the peak
 * (docs/benchmarks.md).
 */
export const NODE_FLAGS: readonly string[] = ["--max-semi-space-size=64"];

/**
 * The environment chat-api runs with beside its flags (read by the C
 * library when the process starts, so `pnpm start` and the image set it;
 * a test checks both against this list, and the benchmarks run with it).
 *
 * `MALLOC_ARENA_MAX=2`: glibc's allocator keeps at most two arenas instead
 * of up to eight per core. Node's own threads (V8's compilers and garbage
 * collector, the render threads, libuv's pool) each took an arena and kept
 * what they had freed: with 1,000 connected clients the server held 128-141
 * MB resident in six runs, and 122-128 MB with two arenas, whose figure per
 * client moved by 1 KB between runs instead of 6 KB; a poll's CPU did not
 * change (docs/benchmarks.md).
 */
export const PROCESS_ENV: Readonly<Record<string, string>> = { MALLOC_ARENA_MAX: "2" };

/** The settings of {@link PROCESS_ENV} the process was started without (their names). */
export function missingProcessEnv(env: NodeJS.ProcessEnv = process.env): string[] {
  return Object.entries(PROCESS_ENV)
    .filter(([name, value]) => env[name] !== value)
    .map(([name]) => name);
}

/** The command that starts chat-api as it should run: its environment, Node and its flags. */
export const START_COMMAND = [
  ...Object.entries(PROCESS_ENV).map(([name, value]) => `${name}=${value}`),
  "node",
  ...NODE_FLAGS,
  "dist/index.js",
].join(" ");
