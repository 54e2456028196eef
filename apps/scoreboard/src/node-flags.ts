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
 *
 * `--max-semi-space-size=16`: a young generation of up to 16 MB per
 * semi-space instead of the few MB V8 keeps it at under this load. Node's
 * HTTP/2 streams outlive a scavenge or two (about 2.5 KB promoted per call
 * with the default), so fewer, larger scavenges promote less and leave less
 * for full collections: GetByRank over gRPC 1.18x faster paired against the
 * same service without the flag, for up to about 50 MB more resident memory
 * under full load (docs/benchmarks.md).
 */
export const NODE_FLAGS: readonly string[] = ["--single-threaded-gc", "--max-semi-space-size=16"];
