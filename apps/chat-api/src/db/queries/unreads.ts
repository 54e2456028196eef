import type { Tx } from "../kysely";

/** One unread message of a user: where it is, and the user's flags on it. */
export interface UnreadRow {
  id: number;
  channel_id: number | null;
  topic: string;
  dm_key: string | null;
  sender_id: number;
  flags: bigint;
}

/**
 * User `userId`'s messages without flag bit `read`, newest first, at most
 * `limit` (`register`'s `unread_msgs`, which Zulip caps the same way).
 */
export async function unreadMessages(
  tx: Tx,
  userId: number,
  read: bigint,
  limit: number,
): Promise<UnreadRow[]> {
  const rows = await tx.q
    .selectFrom("user_messages as um")
    .innerJoin("messages as m", "m.id", "um.message_id")
    .select(["m.id", "m.channel_id", "m.topic", "m.dm_key", "m.sender_id", "um.flags"])
    .where("um.user_id", "=", userId)
    .where((eb) => eb(eb("um.flags", "&", eb.val(read.toString())), "=", "0"))
    .orderBy("um.message_id", "desc")
    .limit(limit)
    .execute();
  return rows.map((r) => ({ ...r, flags: BigInt(r.flags) }));
}

/** Ids of user `userId`'s messages with flag bit `flag`, oldest first (`starred_messages`). */
export async function messagesFlagged(tx: Tx, userId: number, flag: bigint): Promise<number[]> {
  const rows = await tx.q
    .selectFrom("user_messages")
    .select("message_id")
    .where("user_id", "=", userId)
    .where((eb) => eb(eb("flags", "&", eb.val(flag.toString())), "!=", "0"))
    .orderBy("message_id", "asc")
    .execute();
  return rows.map((r) => r.message_id);
}

/**
 * User `userId`'s direct-message conversations, most recent first, at most
 * `limit`: each conversation's member key and newest message id
 * (`recent_private_conversations`).
 */
export async function recentDirectConversations(
  tx: Tx,
  userId: number,
  limit: number,
): Promise<{ dm_key: string; max_message_id: number }[]> {
  const rows = await tx.q
    .selectFrom("user_messages as um")
    .innerJoin("messages as m", "m.id", "um.message_id")
    .select((eb) => ["m.dm_key", eb.fn.max("um.message_id").as("max_message_id")])
    .where("um.user_id", "=", userId)
    .where("m.dm_key", "is not", null)
    .groupBy("m.dm_key")
    .orderBy("max_message_id", "desc")
    .limit(limit)
    .execute();
  return rows.flatMap((r) =>
    r.dm_key === null ? [] : [{ dm_key: r.dm_key, max_message_id: r.max_message_id }],
  );
}

/** The newest message id user `userId` has, or -1 (`max_message_id`). */
export async function newestMessageId(tx: Tx, userId: number): Promise<number> {
  const row = await tx.q
    .selectFrom("user_messages")
    .select((eb) => eb.fn.max("message_id").as("max"))
    .where("user_id", "=", userId)
    .executeTakeFirst();
  return row?.max ?? -1;
}
