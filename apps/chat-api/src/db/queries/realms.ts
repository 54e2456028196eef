import type { Tx } from "../kysely";

/**
 * Locks the realm's row against other lockers (NO KEY UPDATE: rows that merely
 * reference the realm, such as new messages, do not wait): one batch of
 * invitations at a time per realm.
 */
export async function lockRealm(tx: Tx, realmId: number): Promise<void> {
  await tx.q.selectFrom("realms").select("id").where("id", "=", realmId).forNoKeyUpdate().execute();
}

/** The ids of the realm's linkifiers, row-locked for a reordering. */
export async function lockLinkifiers(tx: Tx, realmId: number): Promise<number[]> {
  const rows = await tx.q
    .selectFrom("linkifiers")
    .select("id")
    .where("realm_id", "=", realmId)
    .forUpdate()
    .execute();
  return rows.map((r) => r.id);
}

/** The ids of the realm's custom profile fields, row-locked for a reordering. */
export async function lockProfileFields(tx: Tx, realmId: number): Promise<number[]> {
  const rows = await tx.q
    .selectFrom("custom_profile_fields")
    .select("id")
    .where("realm_id", "=", realmId)
    .forUpdate()
    .execute();
  return rows.map((r) => r.id);
}
