import { sql } from "kysely";
import type { Tx } from "../kysely";
import type { EditSummaryEntry } from "./message-edits";
import { caselessEquals, intArrayLiteral } from "./text";
import { type NewEvent, logInsert, logNotice } from "./events";

/**
 * Sets the bits of `mask` on every copy of message `messageId` to what
 * `bits` gives each user (none for users it does not list), leaving the
 * other bits (read, starred...) as they are: a content edit's mentions.
 */
export async function setContentFlags(
  tx: Tx,
  messageId: number,
  bits: ReadonlyMap<number, bigint>,
  mask: bigint,
): Promise<void> {
  const cases = [...bits].map(
    ([userId, value]) => sql`WHEN ${userId} THEN ${(value & mask).toString()}::bigint`,
  );
  const given =
    cases.length === 0
      ? sql`0::bigint`
      : sql`CASE user_id ${sql.join(cases, sql` `)} ELSE 0::bigint END`;
  await tx.q
    .updateTable("user_messages")
    .set({ flags: sql`(flags & ~${mask.toString()}::bigint) | ${given}` })
    .where("message_id", "=", messageId)
    .execute();
}

/**
 * The active subscribers of channel `channelId` (a message's recipients),
 * with their alert words, in one statement.
 */
export async function channelRecipients(
  tx: Tx,
  channelId: number,
): Promise<{ ids: number[]; alertWords: { user_id: number; word: string }[] }> {
  const rows = await tx.q
    .selectFrom("subscriptions")
    .innerJoin("users", "users.id", "subscriptions.user_id")
    .select((eb) => [
      "subscriptions.user_id",
      eb
        .selectFrom("alert_words")
        .select((sub) => sub.fn.agg<string[]>("array_agg", ["alert_words.word"]).as("words"))
        .whereRef("alert_words.user_id", "=", "subscriptions.user_id")
        .as("words"),
    ])
    .where("subscriptions.channel_id", "=", channelId)
    .where("subscriptions.active", "=", true)
    .where("users.is_active", "=", true)
    .execute();
  return {
    ids: rows.map((r) => r.user_id),
    alertWords: rows.flatMap((r) => (r.words ?? []).map((word) => ({ user_id: r.user_id, word }))),
  };
}

/** A reaction as a message object lists it. */
export interface ReactionView {
  emoji_name: string;
  emoji_code: string;
  reaction_type: string;
  user_id: number;
}

/** A submessage as message objects show it (Zulip's). */
export interface SubmessageView {
  msg_type: string;
  content: string;
  message_id: number;
  sender_id: number;
  id: number;
}

/**
 * Messages `ids` in id order, in one statement, with what their message
 * objects show: the sender's names and address, the realm's subdomain, the
 * channel's name (null for a direct message), the reactions and the
 * submessages (widgets), oldest first.
 */
export function messageRows(tx: Tx, ids: readonly number[]) {
  return tx.q
    .selectFrom("messages as m")
    .innerJoin("users as u", "u.id", "m.sender_id")
    .innerJoin("realms as r", "r.id", "m.realm_id")
    .leftJoin("channels as c", "c.id", "m.channel_id")
    .select([
      "m.id",
      "m.realm_id",
      "m.sender_id",
      "m.channel_id",
      "m.topic",
      "m.dm_key",
      "m.content",
      "m.rendered_content",
      "m.date_sent",
      "m.last_edit_time",
      sql<EditSummaryEntry[] | null>`m.edit_summary`.as("edit_summary"),
      "u.email as sender_email",
      "u.full_name as sender_full_name",
      "u.delivery_email as sender_delivery_email",
      "r.subdomain as realm_subdomain",
      "c.name as channel_name",
      sql<ReactionView[]>`coalesce((
        SELECT json_agg(json_build_object('emoji_name', x.emoji_name, 'emoji_code', x.emoji_code,
                                          'reaction_type', x.reaction_type, 'user_id', x.user_id)
                        ORDER BY x.id)
        FROM reactions x WHERE x.message_id = m.id), '[]'::json)`.as("reactions"),
      sql<SubmessageView[]>`coalesce((
        SELECT json_agg(json_build_object('msg_type', s.msg_type, 'content', s.content,
                                          'message_id', s.message_id, 'sender_id', s.sender_id,
                                          'id', s.id)
                        ORDER BY s.id)
        FROM submessages s WHERE s.message_id = m.id), '[]'::json)`.as("submessages"),
    ])
    .where("m.id", "=", sql<number>`ANY(${[...ids]}::int[])`)
    .orderBy("m.id")
    .execute();
}

/** The columns of a new message (the rest take their defaults). */
export interface NewMessage {
  /** From {@link newMessageId}. */
  id: number;
  realm_id: number;
  sender_id: number;
  channel_id: number | null;
  topic: string;
  dm_key: string | null;
  content: string;
  rendered_content: string;
  date_sent: Date;
}

/**
 * A new message's id (the messages' sequence: an id taken by a send that
 * then fails is a gap, as Zulip's are) and its realm's subdomain, so that its
 * events can be written in the statement that stores it.
 */
export async function newMessageId(
  tx: Tx,
  realmId: number,
): Promise<{ id: number; realm_subdomain: string }> {
  const result = await sql<{ id: number; realm_subdomain: string }>`
    SELECT nextval(pg_get_serial_sequence('messages', 'id'))::int AS id, subdomain AS realm_subdomain
    FROM realms WHERE id = ${realmId}`.execute(tx.q);
  const row = result.rows[0];
  if (row === undefined) throw new Error(`no realm ${String(realmId)}`);
  return row;
}

/**
 * Stores a new message, its per-recipient rows (`flags[i]` for `userIds[i]`,
 * two arrays unnested) and its `events` in one statement whatever their
 * number: a statement is a transaction of its own, so a send that writes
 * nothing else needs no BEGIN and COMMIT.
 */
export async function insertMessageRows(
  tx: Tx,
  message: NewMessage,
  userIds: readonly number[],
  flags: readonly bigint[],
  events: readonly NewEvent[],
): Promise<void> {
  // Built on `tx.q` (the CTEs name no other CTE): one builder for both statements below.
  const row = () => tx.q.insertInto("messages").values(message).returning("id");
  const recipients = () =>
    tx.q
      .insertInto("user_messages")
      .columns(["user_id", "message_id", "flags"])
      .expression(
        sql`SELECT r.u, ${message.id}::int, r.f
            FROM unnest(${intArrayLiteral(userIds)}::int[], ${intArrayLiteral(flags)}::bigint[]) AS r(u, f)`,
      );
  if (events.length === 0)
    await tx.q.with("m", row).with("r", recipients).selectFrom("m").select("m.id").execute();
  else
    await tx.q
      .with("written", (db) => logInsert(db, events))
      .with("m", row)
      .with("r", recipients)
      .selectFrom("written")
      .select(logNotice)
      // Every CTE runs to completion whatever the query reads: one notification is asked for.
      .limit(1)
      .execute();
}

/** The alert words of `userIds`. */
export async function alertWordsOf(
  tx: Tx,
  userIds: readonly number[],
): Promise<{ user_id: number; word: string }[]> {
  if (userIds.length === 0) return [];
  return tx.q
    .selectFrom("alert_words")
    .select(["user_id", "word"])
    .where("user_id", "=", (eb) => eb.fn.any(eb.val([...userIds])))
    .execute();
}

/** Messages `ids` (those that exist): their senders' ids and names. */
export function messageSenders(tx: Tx, ids: readonly number[]) {
  return tx.prisma.message.findMany({
    where: { id: { in: [...ids] } },
    select: { id: true, sender_id: true, sender: { select: { full_name: true } } },
  });
}

/** Which of `among` sent a message to the topic (`topic` in any case) of channel `channelId`. */
export async function topicParticipants(
  tx: Tx,
  channelId: number,
  topic: string,
  among: readonly number[],
): Promise<number[]> {
  const rows = await tx.prisma.message.findMany({
    where: { channel_id: channelId, topic: caselessEquals(topic), sender_id: { in: [...among] } },
    select: { sender_id: true },
    distinct: ["sender_id"],
  });
  return rows.map((r) => r.sender_id);
}

/** Message `id` (it exists) with its sender and its channel (null for a direct message). */
export function messageWithSenderAndChannel(tx: Tx, id: number) {
  return tx.prisma.message.findUniqueOrThrow({
    where: { id },
    include: { sender: true, channel: true },
  });
}

/** Messages `ids` (those that exist). */
export function messagesByIds(tx: Tx, ids: readonly number[]) {
  return tx.prisma.message.findMany({ where: { id: { in: [...ids] } } });
}

/** Where message `id` was sent: its realm, channel (or null), topic and conversation key; null if none. */
export function messagePlace(tx: Tx, id: number) {
  return tx.prisma.message.findUnique({
    where: { id },
    select: { realm_id: true, channel_id: true, topic: true, dm_key: true },
  });
}

/** Users `ids` (those that exist): their ids, addresses and names. */
export function messagePeople(tx: Tx, ids: readonly number[]) {
  return tx.prisma.user.findMany({
    where: { id: { in: [...ids] } },
    select: { id: true, email: true, full_name: true },
  });
}
