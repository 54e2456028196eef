import type { Tx } from "../kysely";
import { sameText } from "./text";

/**
 * The account whose API key is `apiKey`, with what authentication needs of
 * it and whether its realm is deactivated, in one statement.
 */
export function accountByApiKey(tx: Tx, apiKey: string) {
  return tx.q
    .selectFrom("users as u")
    .innerJoin("realms as r", "r.id", "u.realm_id")
    .select([
      "u.id",
      "u.realm_id",
      "u.email",
      "u.delivery_email",
      "u.full_name",
      "u.role",
      "u.is_bot",
      "u.bot_type",
      "u.bot_owner_id",
      "u.is_active",
      "u.is_system_bot",
      "u.api_key",
      "r.deactivated as realm_deactivated",
    ])
    .where("u.api_key", "=", apiKey)
    .executeTakeFirst();
}

/** The realm's account whose delivery address is `email` (any case), active or not. */
export function accountByDeliveryEmail(tx: Tx, realmId: number, email: string) {
  return tx.q
    .selectFrom("users")
    .select(["id", "email", "api_key", "is_active", "password"])
    .where("realm_id", "=", realmId)
    .where((eb) => sameText(eb, "delivery_email", email))
    .executeTakeFirst();
}

/** Whether `email` (any case) is the delivery or the public address of an account of the realm. */
export async function addressTaken(tx: Tx, realmId: number, email: string): Promise<boolean> {
  const row = await tx.q
    .selectFrom("users")
    .select("id")
    .where("realm_id", "=", realmId)
    .where((eb) => eb.or([sameText(eb, "delivery_email", email), sameText(eb, "email", email)]))
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * Locks the user's row against other lockers (NO KEY UPDATE: rows that merely
 * reference the user, such as new messages, do not wait).
 */
export async function lockUser(tx: Tx, userId: number): Promise<void> {
  await tx.q.selectFrom("users").select("id").where("id", "=", userId).forNoKeyUpdate().execute();
}

/** Sets (or, with null, removes) user `userId`'s password hash. */
export async function setPasswordHash(tx: Tx, userId: number, hash: string | null): Promise<void> {
  await tx.q.updateTable("users").set({ password: hash }).where("id", "=", userId).execute();
}
