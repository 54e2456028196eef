import type { Tx } from "../kysely";

/**
 * The caller's reminder `id` if it is still to be sent, row-locked: a delivery
 * in progress finishes first, or finds it gone.
 */
export async function lockPendingReminder(tx: Tx, id: number, userId: number): Promise<boolean> {
  const row = await tx.q
    .selectFrom("reminders")
    .select("id")
    .where("id", "=", id)
    .where("user_id", "=", userId)
    .where("delivered", "=", false)
    .forUpdate()
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * Claims the earliest reminder due at `now` (`FOR UPDATE SKIP LOCKED`: a
 * scheduler on another replica skips it rather than waiting); its id.
 */
export async function claimDueReminder(tx: Tx, now: Date): Promise<number | undefined> {
  const row = await tx.q
    .selectFrom("reminders")
    .select("id")
    .where("delivered", "=", false)
    .where("failed", "=", false)
    .where("scheduled_timestamp", "<=", now)
    .orderBy("scheduled_timestamp")
    .orderBy("id")
    .limit(1)
    .forUpdate()
    .skipLocked()
    .executeTakeFirst();
  return row?.id;
}
