import { setTimeout as sleep } from "node:timers/promises";

/**
 * Resolves once `check` holds, asking every `everyMs`; rejects after
 * `timeoutMs` with an error naming `what`. A check that throws counts as not
 * holding yet (a server still starting refuses its connections). What a
 * process does after a timer of its own, or another process's, may come late
 * on a busy machine: the one way the tests and benchmarks wait for it.
 */
export async function until(
  check: () => boolean | Promise<boolean>,
  timeoutMs: number,
  what: string,
  everyMs = 100,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    let held: boolean;
    try {
      held = await check();
    } catch {
      held = false;
    }
    if (held) return;
    if (Date.now() > deadline)
      throw new Error(`timed out after ${String(timeoutMs)} ms waiting for ${what}`);
    await sleep(everyMs);
  }
}
