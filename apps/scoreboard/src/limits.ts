/** The defaults of the bounds in the server's options (`ServerOptions`), documented in docs/reliability.md. */
export const SERVER_LIMITS = {
  maxConcurrentStreams: 100,
  streamIdleTimeoutMs: 30_000,
  maxConnections: 10_000,
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
} as const;
