import type { Tx } from "../kysely";

/** Records that `userId` muted `mutedId` at `when`; false if they had already. */
export async function insertMute(
  tx: Tx,
  userId: number,
  mutedId: number,
  when: Date,
): Promise<boolean> {
  const row = await tx.q
    .insertInto("muted_users")
    .values({ user_id: userId, muted_user_id: mutedId, date_muted: when })
    .onConflict((oc) => oc.columns(["user_id", "muted_user_id"]).doNothing())
    .returning("id")
    .executeTakeFirst();
  return row !== undefined;
}

/** Forgets that `userId` muted `mutedId`; false if they had not. */
export async function deleteMute(tx: Tx, userId: number, mutedId: number): Promise<boolean> {
  const result = await tx.q
    .deleteFrom("muted_users")
    .where("user_id", "=", userId)
    .where("muted_user_id", "=", mutedId)
    .executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/** Who `userId` muted, and when, in the order they were muted. */
export function mutesOf(tx: Tx, userId: number) {
  return tx.q
    .selectFrom("muted_users")
    .select(["muted_user_id", "date_muted"])
    .where("user_id", "=", userId)
    .orderBy("id")
    .execute();
}

/** Ids of the users who muted `senderId`. */
export async function mutersOf(tx: Tx, senderId: number): Promise<number[]> {
  const rows = await tx.q
    .selectFrom("muted_users")
    .select("user_id")
    .where("muted_user_id", "=", senderId)
    .execute();
  return rows.map((r) => r.user_id);
}

/** How many users user `userId` muted. */
export function muteCount(tx: Tx, userId: number): Promise<number> {
  return tx.prisma.mutedUser.count({ where: { user_id: userId } });
}
