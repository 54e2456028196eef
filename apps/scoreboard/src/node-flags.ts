/**
 * The Node (V8) flags the service runs with: `pnpm start` and the image's
 * ENTRYPOINT pass them (a test checks both against this list), as do the
 * stress tests and the benchmark.
 *
 * `--max-semi-space-size=16`: a young generation of up to 16 MB per
 * semi-space instead of the few MB V8 keeps it at under this load. Node's
 * HTTP/2 streams outlive a scavenge or two (about 2.5 KB promoted per call
 * with the default), so fewer, larger scavenges promote less and leave less
 * for full collections: GetByRank over gRPC 1.18x faster paired against the
 * same service without the flag, for up to about 50 MB more resident memory
 * under full load (docs/benchmarks.md).
 */
export const NODE_FLAGS: readonly string[] = ["--max-semi-space-size=16"];
