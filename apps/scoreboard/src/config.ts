import { loadEnv } from "@repo/env";
import { z } from "zod";

const port = z.coerce.number().int().min(0).max(65535);
const seconds = z.coerce.number().positive();

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
});

/** Parsed configuration. */
export type Config = z.infer<typeof schema>;

/** Reads the configuration from `env`; throws one message naming every bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv): Config {
  return loadEnv(schema, env);
}
