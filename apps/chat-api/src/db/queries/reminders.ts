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
 * Claims reminder `id` if it is still due at `now` (`FOR UPDATE SKIP LOCKED`:
 * a scheduler on another replica delivering it is skipped, not waited for);
 * answers what its delivery needs of it, or undefined.
 */
export function claimDueReminder(tx: Tx, id: number, now: Date) {
  return tx.q
    .selectFrom("reminders")
    .select(["id", "realm_id", "user_id", "message_id", "note"])
    .where("id", "=", id)
    .where("delivered", "=", false)
    .where("failed", "=", false)
    .where("scheduled_timestamp", "<=", now)
    .forUpdate()
    .skipLocked()
    .executeTakeFirst();
}

/** How many of user `userId`'s reminders are still to be sent. */
export function pendingReminderCount(tx: Tx, userId: number): Promise<number> {
  return tx.prisma.reminder.count({ where: { user_id: userId, delivered: false } });
}

/** A new reminder's columns. */
export interface NewReminder {
  realm_id: number;
  user_id: number;
  message_id: number;
  note: string | null;
  scheduled_timestamp: Date;
}

/** Stores a reminder; answers it as stored. */
export function insertReminder(tx: Tx, row: NewReminder) {
  return tx.prisma.reminder.create({ data: row });
}

/** User `userId`'s reminders still to be sent, soonest first. */
export function pendingRemindersOf(tx: Tx, userId: number) {
  return tx.prisma.reminder.findMany({
    where: { user_id: userId, delivered: false },
    orderBy: [{ scheduled_timestamp: "asc" }, { id: "asc" }],
  });
}

/** Deletes reminder `id`. */
export async function deleteReminder(tx: Tx, id: number): Promise<void> {
  await tx.prisma.reminder.delete({ where: { id } });
}

/** Marks reminder `id` failed: it will not be sent. */
export async function failReminder(tx: Tx, id: number): Promise<void> {
  await tx.prisma.reminder.update({ where: { id }, data: { failed: true } });
}

/** Marks reminder `id` delivered as message `messageId`. */
export async function markReminderDelivered(tx: Tx, id: number, messageId: number): Promise<void> {
  await tx.prisma.reminder.update({
    where: { id },
    data: { delivered: true, delivered_message_id: messageId },
  });
}
