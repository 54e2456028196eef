import { sql } from "kysely";
import type { Tx } from "../kysely";
import { caselessEquals, sameText } from "./text";

/**
 * Rows a write over many messages touches per statement: the embedded
 * database runs each statement on the server's thread, so a 5,000-message
 * move is ten short statements (in its one transaction), not one long one.
 */
const ROWS_PER_STATEMENT = 500;

/** `ids` in slices of {@link ROWS_PER_STATEMENT}. */
function batches(ids: readonly number[]): number[][] {
  const slices: number[][] = [];
  for (let i = 0; i < ids.length; i += ROWS_PER_STATEMENT)
    slices.push(ids.slice(i, i + ROWS_PER_STATEMENT));
  return slices;
}
/** One entry of a message's `edit_history`. */
export interface EditEntry {
  user_id: number;
  timestamp: number;
  prev_content?: string;
  prev_rendered_content?: string;
  prev_topic?: string;
  topic?: string;
  /** A move to another channel: where from, and where to. */
  prev_stream?: number;
  stream?: number;
}

/** How many edits, newest first, a message object's `edit_history` shows. */
export const EDIT_SUMMARY_LENGTH = 20;

/** An entry of `edit_summary`: an edit without the content it replaced. */
export type EditSummaryEntry = Omit<EditEntry, "prev_content" | "prev_rendered_content">;

/**
 * Appends `entry` to the edit history of each message of `ids`, and puts it
 * first in their `edit_summary` (newest {@link EDIT_SUMMARY_LENGTH}, without
 * content), in one statement.
 */
export async function appendEditHistory(
  tx: Tx,
  ids: readonly number[],
  entry: EditEntry,
): Promise<void> {
  if (ids.length === 0) return;
  const { prev_content: _content, prev_rendered_content: _rendered, ...summary } = entry;
  const newest = `$[0 to ${String(EDIT_SUMMARY_LENGTH - 1)}]`;
  for (const batch of batches(ids))
    await tx.q
      .updateTable("messages")
      .set({
        edit_history: sql`coalesce(edit_history, '[]'::jsonb) || ${JSON.stringify([entry])}::jsonb`,
        edit_summary: sql`jsonb_path_query_array(
          ${JSON.stringify([summary])}::jsonb || coalesce(edit_summary, '[]'::jsonb), ${newest}::jsonpath)`,
      })
      .where("id", "in", batch)
      .execute();
}

/** The most edits any message of `ids` has recorded, and the largest history's size in bytes. */
export async function longestEditHistory(
  tx: Tx,
  ids: readonly number[],
): Promise<{ edits: number; bytes: number }> {
  if (ids.length === 0) return { edits: 0, bytes: 0 };
  const row = await tx.q
    .selectFrom("messages")
    .select([
      sql<number>`coalesce(max(jsonb_array_length(edit_history)), 0)::int`.as("edits"),
      sql<number>`coalesce(max(octet_length(edit_history::text)), 0)::int`.as("bytes"),
    ])
    .where("id", "in", [...ids])
    .executeTakeFirst();
  return { edits: row?.edits ?? 0, bytes: row?.bytes ?? 0 };
}

/**
 * Gives messages `ids`, moved to channel `channelId`, the recipients of their
 * new channel: rows of users who are not its active subscribers are deleted
 * (they lose the messages), and its active subscribers who lack a row get one
 * flagged `read` (a move brings no unread). Returns the users who lost rows.
 */
export async function moveRecipients(
  tx: Tx,
  ids: readonly number[],
  channelId: number,
  read: bigint,
): Promise<number[]> {
  if (ids.length === 0) return [];
  const lost = await tx.q
    .deleteFrom("user_messages as um")
    .where("um.message_id", "in", [...ids])
    .where((eb) =>
      eb.not(
        eb.exists(
          eb
            .selectFrom("subscriptions as s")
            .select("s.id")
            .whereRef("s.user_id", "=", "um.user_id")
            .where("s.channel_id", "=", channelId)
            .where("s.active", "=", true),
        ),
      ),
    )
    .returning("um.user_id")
    .execute();
  await tx.q
    .insertInto("user_messages")
    .columns(["user_id", "message_id", "flags"])
    .expression((eb) =>
      eb
        .selectFrom("subscriptions as s")
        .innerJoin("users as u", "u.id", "s.user_id")
        .innerJoin("messages as m", (join) => join.on("m.id", "in", [...ids]))
        .select(["s.user_id", "m.id", sql<string>`${read.toString()}::bigint`.as("flags")])
        .where("s.channel_id", "=", channelId)
        .where("s.active", "=", true)
        .where("u.is_active", "=", true),
    )
    .onConflict((oc) => oc.doNothing())
    .execute();
  return [...new Set(lost.map((row) => row.user_id))];
}

/**
 * Up to `limit` channel messages sent before their channel's retention
 * allows at `now`, locked; rows another transaction holds (another
 * replica's sweep) are skipped, so sweeps never wait on each other.
 */
export async function expiredMessageIds(tx: Tx, now: Date, limit: number): Promise<number[]> {
  const days = sql<number>`coalesce(c.message_retention_days, r.message_retention_days, -1)`;
  const rows = await tx.q
    .selectFrom("messages as m")
    .innerJoin("channels as c", "c.id", "m.channel_id")
    .innerJoin("realms as r", "r.id", "m.realm_id")
    .select("m.id")
    .where(days, ">", 0)
    .where("m.date_sent", "<", sql<Date>`${now}::timestamptz - make_interval(days => ${days})`)
    .orderBy("m.id")
    .limit(limit)
    .forUpdate("m")
    .skipLocked()
    .execute();
  return rows.map((row) => row.id);
}

/** Message `id` with its channel (null for a direct message), if user `userId` has it; else null. */
export async function heldMessageWithChannel(tx: Tx, userId: number, id: number) {
  const held = await tx.prisma.userMessage.findUnique({
    where: { user_id_message_id: { user_id: userId, message_id: id } },
    select: { message_id: true },
  });
  if (held === null) return null;
  return tx.prisma.message.findUnique({ where: { id }, include: { channel: true } });
}

/** Deletes message `id` (its recipients' rows, reactions and submessages with it). */
export async function deleteMessage(tx: Tx, id: number): Promise<void> {
  await tx.prisma.message.delete({ where: { id } });
}

/**
 * Ids of the messages of a topic (any case) of channel `channelId`, by id,
 * from `fromId` on if given; at most `limit`.
 */
export async function topicMessageIds(
  tx: Tx,
  channelId: number,
  topic: string,
  fromId: number | undefined,
  limit: number,
): Promise<number[]> {
  const rows = await tx.prisma.message.findMany({
    where: {
      channel_id: channelId,
      topic: caselessEquals(topic),
      ...(fromId === undefined ? {} : { id: { gte: fromId } }),
    },
    select: { id: true },
    orderBy: { id: "asc" },
    take: limit,
  });
  return rows.map((r) => r.id);
}

/** Replaces message `id`'s content and its rendering. */
export async function setMessageContent(
  tx: Tx,
  id: number,
  content: string,
  rendered: string,
  editTime: Date,
): Promise<void> {
  await tx.prisma.message.update({
    where: { id },
    data: { content, rendered_content: rendered, last_edit_time: editTime },
  });
}

/** Moves messages `ids` to a channel's topic, in one statement. */
export async function moveMessages(
  tx: Tx,
  ids: readonly number[],
  to: { channelId: number; topic: string },
  editTime: Date,
): Promise<void> {
  for (const batch of batches(ids))
    await tx.prisma.message.updateMany({
      where: { id: { in: batch } },
      data: { channel_id: to.channelId, topic: to.topic, last_edit_time: editTime },
    });
}

/** Deletes messages `ids` (with everything that hangs on them); answers how many there were. */
export async function deleteMessages(tx: Tx, ids: readonly number[]): Promise<number> {
  const { count } = await tx.prisma.message.deleteMany({ where: { id: { in: [...ids] } } });
  return count;
}

/**
 * The newest `limit` messages of a topic (any case) of channel `channelId`,
 * row-locked (a concurrent edit or deletion finishes first): those `heldBy`
 * holds when given (a channel whose history is not public to subscribers).
 */
export async function newestTopicMessagesForUpdate(
  tx: Tx,
  channelId: number,
  topic: string,
  heldBy: number | undefined,
  limit: number,
): Promise<number[]> {
  let query = tx.q
    .selectFrom("messages as m")
    .select("m.id")
    .where("m.channel_id", "=", channelId)
    .where((eb) => sameText(eb, "m.topic", topic));
  if (heldBy !== undefined)
    query = query.where((eb) =>
      eb.exists(
        eb
          .selectFrom("user_messages as um")
          .select("um.message_id")
          .whereRef("um.message_id", "=", "m.id")
          .where("um.user_id", "=", heldBy),
      ),
    );
  const rows = await query.orderBy("m.id", "desc").limit(limit).forUpdate().execute();
  return rows.map((r) => r.id);
}
