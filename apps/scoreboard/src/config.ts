import { loadEnv } from "@repo/env";
import { z } from "zod";
import { SERVER_LIMITS } from "./limits";

const port = z.coerce.number().int().min(0).max(65535);
const seconds = z.coerce.number().positive();
const count = z.coerce
  .number()
  .int()
  .min(1)
  .max(2 ** 31 - 1);

/** The configuration table of the behaviour contract (plus two settings of ours, documented in the README). */
const schema = z.object({
  SCOREBOARD_PORT: port.default(50051),
  SCOREBOARD_HOST: z.string().min(1).default("0.0.0.0"),
  SCOREBOARD_METRICS_PORT: port.default(9090),
  SCOREBOARD_SOURCE: z
    .string()
    .optional()
    .refine(
      (v) => v === undefined || v === "" || /^(https?|file):\/\//i.test(v) || v.startsWith("/"),
      "must be an absolute file path, a file:// URL or an http(s):// URL",
    ),
  SCOREBOARD_REFRESH_SECONDS: seconds.default(300),
  SCOREBOARD_FETCH_TIMEOUT_SECONDS: seconds.default(30),
  SCOREBOARD_MAX_CONNECTION_AGE_SECONDS: seconds.optional(),
  SCOREBOARD_MAX_CONNECTION_AGE_GRACE_SECONDS: seconds.default(30),
  SCOREBOARD_MAX_SHRINK: z.coerce.number().min(0).max(1).default(0.5),
  SCOREBOARD_SHUTDOWN_GRACE_SECONDS: seconds.default(25),
  SCOREBOARD_LOG_LEVEL: z
    .enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"])
    .default("info"),
  SCOREBOARD_CORS_ORIGINS: z.string().default(""),
  // Bounds on what one client can hold (docs/reliability.md).
  SCOREBOARD_MAX_CONCURRENT_STREAMS: count.default(SERVER_LIMITS.maxConcurrentStreams),
  SCOREBOARD_STREAM_IDLE_TIMEOUT_SECONDS: seconds.default(SERVER_LIMITS.streamIdleTimeoutMs / 1000),
  SCOREBOARD_MAX_CONNECTIONS: count.default(SERVER_LIMITS.maxConnections),
  SCOREBOARD_HEADERS_TIMEOUT_SECONDS: seconds.default(SERVER_LIMITS.headersTimeoutMs / 1000),
  SCOREBOARD_REQUEST_TIMEOUT_SECONDS: seconds.default(SERVER_LIMITS.requestTimeoutMs / 1000),
});

/** Parsed configuration. */
export type Config = z.infer<typeof schema>;

/** Reads the configuration from `env`; throws one message naming every bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv): Config {
  return loadEnv(schema, env);
}
