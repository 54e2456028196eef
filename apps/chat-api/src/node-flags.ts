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
