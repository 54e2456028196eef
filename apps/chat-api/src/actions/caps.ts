import { JsonableError } from "@repo/envelope";

/**
 * Refuses to add `adding` objects to the `held` a user already keeps when that
 * would pass `cap` (CHAT_MAX_OBJECTS_PER_USER: drafts, saved snippets, pending
 * reminders, devices and push tokens each), so that no user can grow a table
 * without bound. Called inside the transaction that adds them.
 */
export function checkCap(held: number, adding: number, cap: number, what: string): void {
  if (held + adding > cap)
    throw new JsonableError(`You have too many ${what} (limit: ${String(cap)}).`);
}
