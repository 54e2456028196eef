import type { Prisma } from "../../gen/prisma/client";
import type { Tx } from "../kysely";

/** A new scheduled message's columns. */
export interface NewScheduledMessage {
  realm_id: number;
  sender_id: number;
  channel_id: number | null;
  topic: string;
  to_user_ids: number[];
  content: string;
  rendered_content: string;
  scheduled_timestamp: Date;
  read_by_sender: boolean | null;
}

/** Stores a scheduled message; answers it as stored. */
export function insertScheduledMessage(tx: Tx, row: NewScheduledMessage) {
  return tx.prisma.scheduledMessage.create({ data: row });
}

/** User `userId`'s scheduled messages not yet sent (failed ones included), soonest first. */
export function pendingScheduledMessagesOf(tx: Tx, userId: number) {
  return tx.prisma.scheduledMessage.findMany({
    where: { sender_id: userId, delivered: false },
    orderBy: [{ scheduled_timestamp: "asc" }, { id: "asc" }],
  });
}

/** How many of user `userId`'s scheduled messages are not yet sent. */
export function pendingScheduledCount(tx: Tx, userId: number): Promise<number> {
  return tx.prisma.scheduledMessage.count({ where: { sender_id: userId, delivered: false } });
}

/**
 * The caller's scheduled message `id` if it is not yet sent, row-locked: a
 * delivery in progress finishes first, or finds it changed or gone.
 */
export async function lockPendingScheduledMessage(tx: Tx, id: number, userId: number) {
  const row = await tx.q
    .selectFrom("scheduled_messages")
    .select("id")
    .where("id", "=", id)
    .where("sender_id", "=", userId)
    .where("delivered", "=", false)
    .forUpdate()
    .executeTakeFirst();
  if (row === undefined) return undefined;
  return tx.prisma.scheduledMessage.findUniqueOrThrow({ where: { id } });
}

/** Changes scheduled message `id`; answers it as stored. */
export function updateScheduledMessage(
  tx: Tx,
  id: number,
  change: Prisma.ScheduledMessageUncheckedUpdateInput,
) {
  return tx.prisma.scheduledMessage.update({ where: { id }, data: change });
}

/** Deletes scheduled message `id`. */
export async function deleteScheduledMessage(tx: Tx, id: number): Promise<void> {
  await tx.prisma.scheduledMessage.delete({ where: { id } });
}

/**
 * Claims scheduled message `id` if it is still due at `now` (`FOR UPDATE
 * SKIP LOCKED`: one that another replica is sending is skipped, not waited
 * for); answers it, or undefined.
 */
export async function claimDueScheduledMessage(tx: Tx, id: number, now: Date) {
  const row = await tx.q
    .selectFrom("scheduled_messages")
    .select("id")
    .where("id", "=", id)
    .where("delivered", "=", false)
    .where("failed", "=", false)
    .where("scheduled_timestamp", "<=", now)
    .forUpdate()
    .skipLocked()
    .executeTakeFirst();
  if (row === undefined) return undefined;
  return tx.prisma.scheduledMessage.findUniqueOrThrow({ where: { id } });
}
