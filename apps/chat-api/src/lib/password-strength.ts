/**
 * Zulip's password rule (its `check_password_strength`): at least
 * {@link PASSWORD_MIN_LENGTH} characters, and at least
 * {@link PASSWORD_MIN_GUESSES} guesses by zxcvbn's estimate. Both are in
 * `GET /server_settings` and `POST /register`, for clients that check before
 * they send. zxcvbn runs on one worker thread started at the first check (its
 * dictionaries, some megabytes, are that thread's), with a time limit: a check
 * past it ends the thread, and the caller is asked to try again (429), as when
 * too many checks wait.
 */
import { extname, join } from "node:path";
import { RateLimitedError } from "@repo/envelope";
import { Piscina } from "piscina";
import type { StrengthTask } from "./password-worker";
import { codePoints } from "./text";

/** Zulip's defaults. */
export const PASSWORD_MIN_LENGTH = 6;
export const PASSWORD_MIN_GUESSES = 10_000;
/** The longest password the sign-up and reset forms take (Zulip's forms: 100). */
export const FORM_PASSWORD_MAX_LENGTH = 100;
/**
 * How long one check may take, from when it is asked: the thread's start and
 * its dictionaries' load (a third of a second idle, seconds on a busy machine)
 * and the wait behind other checks count. A check itself takes 75 ms at worst.
 */
export const STRENGTH_TIME_LIMIT_MS = 10_000;
/** Checks that may wait for the thread; past them the caller is asked to come back. */
const QUEUE_LIMIT = 64;

const workerFile = join(__dirname, `password-worker${extname(__filename)}`);
const workerExecArgv = workerFile.endsWith(".ts")
  ? ["--conditions=@repo/source", "--require", "@swc-node/register"]
  : [];

let pool: Piscina<StrengthTask, number> | undefined;

function strengthPool(): Piscina<StrengthTask, number> {
  pool ??= new Piscina<StrengthTask, number>({
    filename: workerFile,
    execArgv: workerExecArgv,
    minThreads: 0,
    maxThreads: 1,
    maxQueue: QUEUE_LIMIT,
    idleTimeout: 60_000,
    resourceLimits: { maxOldGenerationSizeMb: 128 },
  });
  return pool;
}

/**
 * Whether `password` passes Zulip's rule; `userInputs` (the person's name and
 * address, the organization's name) count as guessed first.
 */
export async function isStrongPassword(
  password: string,
  userInputs: readonly string[] = [],
): Promise<boolean> {
  if (codePoints(password) < PASSWORD_MIN_LENGTH) return false;
  const checks = strengthPool();
  if (checks.queueSize >= QUEUE_LIMIT) throw new RateLimitedError(1);
  try {
    const guesses = await checks.run(
      { password, userInputs: [...userInputs], maxLength: FORM_PASSWORD_MAX_LENGTH },
      { signal: AbortSignal.timeout(STRENGTH_TIME_LIMIT_MS) },
    );
    return guesses >= PASSWORD_MIN_GUESSES;
  } catch (error) {
    if (error instanceof Error && error.name === "AbortError") throw new RateLimitedError(1);
    throw error;
  }
}

/** Stops the checks' thread (the server's shutdown, tests). */
export async function closePasswordChecks(): Promise<void> {
  const running = pool;
  pool = undefined;
  await running?.destroy();
}
