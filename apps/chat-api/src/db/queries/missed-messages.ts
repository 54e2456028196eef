import { sql } from "kysely";
import type { Tx } from "../kysely";
import { MENTION_FLAGS, MESSAGE_FLAGS } from "../../lib/message-flag-bits";

/**
 * How far the missed-message e-mails have looked, locked until the
 * transaction ends; undefined while another replica holds it.
 */
export async function claimMissedMessageScan(tx: Tx): Promise<number | undefined> {
  const row = await tx.q
    .selectFrom("missed_message_scans")
    .select("last_message_id")
    .where("id", "=", 1)
    .forUpdate()
    .skipLocked()
    .executeTakeFirst();
  return row?.last_message_id;
}

/** Moves the scan past message `lastMessageId`. */
export async function advanceMissedMessageScan(tx: Tx, lastMessageId: number): Promise<void> {
  await tx.q
    .updateTable("missed_message_scans")
    .set({ last_message_id: lastMessageId })
    .where("id", "=", 1)
    .execute();
}

/**
 * The id of the last of the next `limit` messages after `after` sent before
 * `sentBefore` (the next slice of the scan), or undefined when there is none.
 */
export async function nextScanEnd(
  tx: Tx,
  after: number,
  sentBefore: Date,
  limit: number,
): Promise<number | undefined> {
  const row = await tx.q
    .selectFrom((eb) =>
      eb
        .selectFrom("messages")
        .select("id")
        .where("id", ">", after)
        .where("date_sent", "<", sentBefore)
        .orderBy("id")
        .limit(limit)
        .as("slice"),
    )
    .select((eb) => eb.fn.max("slice.id").as("last"))
    .executeTakeFirst();
  return row?.last ?? undefined;
}

/** A message a person missed: still unread, a direct message to them or a mention of them. */
export interface MissedMessage {
  user_id: number;
  realm_id: number;
  delivery_email: string;
  message_id: number;
  sender_id: number;
  sender_name: string;
  channel_id: number | null;
  channel_name: string | null;
  topic: string;
  dm_key: string | null;
  content: string;
  date_sent: Date;
  /** Whether the person wants the content in e-mails (`message_content_in_email_notifications`). */
  with_content: boolean;
}

/**
 * The messages of ids (`after`, `upTo`] sent since `sentSince` that their
 * recipients missed: unread direct messages and mentions (wildcard ones for
 * those who take them: `wildcard_mentions_notify`), not their own, of active
 * people who take e-mails when offline (`enable_offline_email_notifications`)
 * and had no client polling since `idleSince`. Oldest first per person.
 */
export function missedMessages(
  tx: Tx,
  after: number,
  upTo: number,
  sentSince: Date,
  idleSince: Date,
): Promise<MissedMessage[]> {
  const setting = (name: string) => sql<boolean>`coalesce((u.settings ->> ${name})::boolean, true)`;
  const mentionBits = sql.lit(Number(MENTION_FLAGS));
  return (
    tx.q
      // The candidates, without reading a channel message's every recipient: a
      // direct message's rows, and mentions through their partial index
      // (`user_messages_mentions_idx`, whose predicate this repeats).
      .with("candidates", (db) =>
        db
          .selectFrom("messages as dm")
          .innerJoin("user_messages as dum", "dum.message_id", "dm.id")
          .select(["dum.user_id", "dum.message_id", "dum.flags"])
          .where("dm.id", ">", after)
          .where("dm.id", "<=", upTo)
          .where("dm.channel_id", "is", null)
          .unionAll(
            db
              .selectFrom("user_messages as mum")
              .innerJoin("messages as cm", "cm.id", "mum.message_id")
              .select(["mum.user_id", "mum.message_id", "mum.flags"])
              .where("mum.message_id", ">", after)
              .where("mum.message_id", "<=", upTo)
              .where(sql<boolean>`(mum.flags & ${mentionBits}) <> 0`)
              .where("cm.channel_id", "is not", null),
          ),
      )
      .selectFrom("candidates as um")
      .innerJoin("messages as m", "m.id", "um.message_id")
      .innerJoin("users as u", "u.id", "um.user_id")
      .innerJoin("users as s", "s.id", "m.sender_id")
      .leftJoin("channels as c", "c.id", "m.channel_id")
      .select([
        "um.user_id",
        "m.realm_id",
        "u.delivery_email",
        "m.id as message_id",
        "m.sender_id",
        "s.full_name as sender_name",
        "m.channel_id",
        "c.name as channel_name",
        "m.topic",
        "m.dm_key",
        "m.content",
        "m.date_sent",
      ])
      .select(setting("message_content_in_email_notifications").as("with_content"))
      .where("m.date_sent", ">=", sentSince)
      .whereRef("um.user_id", "<>", "m.sender_id")
      .where(sql<boolean>`(um.flags & ${sql.lit(Number(MESSAGE_FLAGS.read))}) = 0`)
      .where((eb) =>
        eb.or([
          eb("m.channel_id", "is", null),
          sql<boolean>`(um.flags & ${sql.lit(Number(MESSAGE_FLAGS.mentioned))}) <> 0`,
          setting("wildcard_mentions_notify"),
        ]),
      )
      .where("u.is_active", "=", true)
      .where("u.is_bot", "=", false)
      .where(setting("enable_offline_email_notifications"))
      .where((eb) =>
        eb.not(
          eb.exists(
            eb
              .selectFrom("event_queues as q")
              .select("q.id")
              .whereRef("q.user_id", "=", "um.user_id")
              .where("q.last_poll_time", ">=", idleSince),
          ),
        ),
      )
      .orderBy("um.user_id")
      .orderBy("m.id")
      .execute()
  );
}
