/**
 * The Node (V8) flags the service runs with: `pnpm start` and the image's
 * ENTRYPOINT pass them (a test checks both against this list), as do the
 * stress tests and the benchmark.
 *
 * `--single-threaded-gc`: each thread collects its own garbage. A refresh
 * parses a large board in a worker thread at the lowest CPU priority; with
 * V8's default, that worker's collections (over 300 ms on a 1,000,000-entry
 * board) run on helper threads shared by the whole process at normal priority,
 * and the service's own small collections waited on them: 14-28 ms pauses of
 * a 12 MB heap. Single-threaded, the worker's collections stay on its own
 * low-priority thread (docs/benchmarks.md has the figures).
 */
export const NODE_FLAGS: readonly string[] = ["--single-threaded-gc"];
