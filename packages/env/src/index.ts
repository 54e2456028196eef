import type { z } from "zod";

/** A configuration that could not be read: one line per bad variable. */
export class ConfigError extends Error {
  override readonly name = "ConfigError";
}

/**
 * Reads configuration from environment variables with `schema`. Empty
 * variables count as unset (so defaults apply); every bad variable is named in
 * one message, so an operator fixes them all at once.
 */
export function loadEnv<S extends z.ZodType>(schema: S, env: NodeJS.ProcessEnv): z.output<S> {
  const present = Object.fromEntries(
    Object.entries(env).filter(([, v]) => v !== undefined && v !== ""),
  );
  const result = schema.safeParse(present);
  if (!result.success) {
    const problems = result.error.issues.map(
      (issue) => `${issue.path.join(".")}: ${issue.message}`,
    );
    throw new ConfigError(`invalid configuration:\n  ${problems.join("\n  ")}`);
  }
  return result.data;
}

/**
 * The flags of `expected` (the Node and V8 flags a service is meant to run
 * with) that this process was started without.
 */
export function missingNodeFlags(
  expected: readonly string[],
  execArgv: readonly string[] = process.execArgv,
): string[] {
  return expected.filter((flag) => !execArgv.includes(flag));
}
