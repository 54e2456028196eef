import { usersByIdOrEmail } from "../db/queries/users";
import type { Tx } from "../db/kysely";
import { JsonableError } from "@repo/envelope";

/** Most distinct users one request may name (direct message recipients, principals). */
export const MAX_USERS_PER_REQUEST = 1000;

/** A user of the realm as a reference (id or email) found it. */
export interface FoundUser {
  id: number;
  email: string;
  is_active: boolean;
}

/**
 * The users of realm `realmId` that `refs` name (ids, or emails compared
 * case-insensitively), duplicates dropped, in the order first named, in one
 * query whatever their number; `missing` is told the first reference that
 * names no one and throws. More than {@link MAX_USERS_PER_REQUEST} distinct
 * references are refused before any lookup.
 */
export async function findUsers(
  tx: Tx,
  realmId: number,
  refs: readonly (number | string)[],
  missing: (ref: number | string) => never,
): Promise<FoundUser[]> {
  const keys = [...new Set(refs.map((ref) => (typeof ref === "number" ? ref : ref.toLowerCase())))];
  if (keys.length > MAX_USERS_PER_REQUEST)
    throw new JsonableError(`Too many users (limit: ${String(MAX_USERS_PER_REQUEST)})`);
  const ids = keys.filter((k): k is number => typeof k === "number");
  const emails = keys.filter((k): k is string => typeof k === "string");
  const rows = await usersByIdOrEmail(tx, realmId, ids, emails);
  const byId = new Map(rows.map((row) => [row.id, row]));
  const byEmail = new Map(rows.map((row) => [row.email.toLowerCase(), row]));
  const found = new Map<number, FoundUser>();
  for (const key of keys) {
    const row = typeof key === "number" ? byId.get(key) : byEmail.get(key);
    if (row === undefined)
      missing(
        refs.find((ref) => ref === key || (typeof ref === "string" && ref.toLowerCase() === key)) ??
          key,
      );
    found.set(row.id, row);
  }
  return [...found.values()];
}
