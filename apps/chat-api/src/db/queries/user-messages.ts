/**
 * Statements that read who has which messages (`user_messages` by message or
 * by user); the rows are written with their message (`messages.ts`).
 */
import type { Tx } from "../kysely";
import { sameText } from "./text";

/**
 * The active users who have one of the messages `ids` (their recipients),
 * ascending; without `exceptUserId`. Each with their flags on the first of
 * `ids` they have and their settings (read receipts ask for them).
 */
export async function activeHolders(
  tx: Tx,
  ids: readonly number[],
  exceptUserId?: number,
): Promise<{ user_id: number; flags: bigint; settings: unknown }[]> {
  if (ids.length === 0) return [];
  const rows = await tx.q
    .selectFrom("user_messages as um")
    .innerJoin("users as u", "u.id", "um.user_id")
    .distinctOn("um.user_id")
    .select(["um.user_id", "um.flags", "u.settings"])
    .where("um.message_id", "in", [...ids])
    .where("u.is_active", "=", true)
    .$if(exceptUserId !== undefined, (q) => q.where("um.user_id", "!=", exceptUserId ?? 0))
    .orderBy("um.user_id")
    .orderBy("um.message_id")
    .execute();
  return rows.map((row) => ({ ...row, flags: BigInt(row.flags) }));
}

/**
 * How many messages of topic `topic` (case-insensitively) in channel
 * `channelId` user `userId` has, leaving out `exceptIds`.
 */
export async function receivedInTopic(
  tx: Tx,
  userId: number,
  channelId: number,
  topic: string,
  exceptIds: readonly number[] = [],
): Promise<number> {
  const row = await tx.q
    .selectFrom("user_messages as um")
    .innerJoin("messages as m", "m.id", "um.message_id")
    .select((eb) => eb.fn.countAll<string>().as("count"))
    .where("um.user_id", "=", userId)
    .where("m.channel_id", "=", channelId)
    .where((eb) => sameText(eb, "m.topic", topic))
    .$if(exceptIds.length > 0, (q) => q.where("m.id", "not in", [...exceptIds]))
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

/** Whether message `messageId` is in user `userId`'s history. */
export async function holdsMessage(tx: Tx, userId: number, messageId: number): Promise<boolean> {
  const count = await tx.prisma.userMessage.count({
    where: { user_id: userId, message_id: messageId },
  });
  return count > 0;
}

/** User `userId`'s flags on messages `ids` (those they have), by message id. */
export async function flagsOn(
  tx: Tx,
  userId: number,
  ids: readonly number[],
): Promise<Map<number, bigint>> {
  const rows = await tx.prisma.userMessage.findMany({
    where: { user_id: userId, message_id: { in: [...ids] } },
    select: { message_id: true, flags: true },
  });
  return new Map(rows.map((row) => [row.message_id, row.flags]));
}
