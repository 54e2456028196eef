/**
 * Statements that change a user's own flags on their messages (`read`,
 * `starred`, `collapsed`): by ids, a channel or topic, or in batches; by
 * ids and by channel or topic with their event, in one statement
 * (`setFlagWithEvent`, `markReadWithEvent`).
 */
import { type Kysely, type QueryCreator, sql } from "kysely";
import type { DB } from "../../gen/kysely/tables";
import type { Tx } from "../kysely";
import { type NewEvent, logInsertNaming, logNotice } from "./events";

/**
 * One batch of marking read: sets flag bit `read` on user `userId`'s newest
 * `limit` messages without it (locked), and answers their ids.
 */
export function markReadBatchQuery(q: Kysely<DB>, read: bigint, userId: number, limit: number) {
  const flag = read.toString();
  return q
    .updateTable("user_messages")
    .set((eb) => ({ flags: eb("flags", "|", eb.val(flag)) }))
    .where("user_id", "=", userId)
    .where("message_id", "in", (eb) =>
      eb
        .selectFrom("user_messages")
        .select("message_id")
        .where("user_id", "=", userId)
        .where((eb) => eb(eb("flags", "&", eb.val(flag)), "=", "0"))
        .orderBy("message_id", "desc")
        .limit(limit)
        .forUpdate(),
    )
    .returning("message_id");
}

/** {@link markReadBatchQuery}, run on `tx`: the ids it marked. */
export async function markReadBatch(
  tx: Tx,
  read: bigint,
  userId: number,
  limit: number,
): Promise<number[]> {
  const rows = await markReadBatchQuery(tx.q, read, userId, limit).execute();
  return rows.map((r) => r.message_id);
}

/**
 * The UPDATE that sets (`on`) or clears flag bit `bit` on user `userId`'s
 * messages among `ids` (not empty) where it is not already so, returning the
 * ids it changed.
 */
function setFlagQuery(
  q: QueryCreator<DB>,
  userId: number,
  ids: readonly number[],
  bit: bigint,
  on: boolean,
) {
  const flag = bit.toString();
  return q
    .updateTable("user_messages")
    .set((eb) => ({
      flags: on ? eb("flags", "|", eb.val(flag)) : eb("flags", "&", eb.val((~bit).toString())),
    }))
    .where("user_id", "=", userId)
    .where("message_id", "in", [...ids])
    .where((eb) => eb(eb("flags", "&", eb.val(flag)), on ? "=" : "!=", "0"))
    .returning("message_id");
}

/** {@link setFlagQuery}, run on `tx`: the ids it changed, ascending. */
export async function setFlag(
  tx: Tx,
  userId: number,
  ids: readonly number[],
  bit: bigint,
  on: boolean,
): Promise<number[]> {
  if (ids.length === 0) return [];
  const rows = await setFlagQuery(tx.q, userId, ids, bit, on).execute();
  return rows.map((r) => r.message_id).sort((a, b) => a - b);
}

/** An UPDATE of a user's `user_messages` rows returning the ids it changed: a flag change. */
type FlagChange = (db: QueryCreator<DB>) => ReturnType<typeof setFlagQuery>;

/**
 * Flag change `change` and its event in one statement (a transaction by
 * itself): `event` is written with its `messages` set to the ids that
 * changed, when some did. Answers those ids, ascending; the caller then calls
 * `tx.wroteEvents()` if there are any.
 */
async function changeWithEvent(tx: Tx, change: FlagChange, event: NewEvent): Promise<number[]> {
  const row = await tx.q
    .with("changed", (db) => change(db))
    // Built on `tx.q`: it names "changed" in SQL text, not through the builder's types.
    .with("written", () => logInsertNaming(tx.q, event, "messages", "changed", "message_id"))
    .selectFrom("written")
    .select([
      logNotice,
      sql<
        number[]
      >`(SELECT array_to_json(array_agg(message_id ORDER BY message_id)) FROM changed)`.as("ids"),
    ])
    // Nothing changed, nothing written: no row, no notification.
    .limit(1)
    .executeTakeFirst();
  return row?.ids ?? [];
}

/** {@link setFlag} and its event in one statement ({@link changeWithEvent}). */
export async function setFlagWithEvent(
  tx: Tx,
  userId: number,
  ids: readonly number[],
  bit: bigint,
  on: boolean,
  event: NewEvent,
): Promise<number[]> {
  if (ids.length === 0) return [];
  return changeWithEvent(tx, (db) => setFlagQuery(db, userId, ids, bit, on), event);
}

/** Which of a user's messages a {@link markReadWithEvent} marks read. */
export type ReadScope = { channelId: number; topic: string | undefined } | { senderId: number };

/**
 * Marks read user `userId`'s unread messages in `scope` (a channel, one of
 * its topics in any case, or one sender's), with its event `event`, in one
 * statement ({@link changeWithEvent}); answers the ids it changed, ascending.
 */
export async function markReadWithEvent(
  tx: Tx,
  read: bigint,
  userId: number,
  scope: ReadScope,
  event: NewEvent,
): Promise<number[]> {
  const flag = read.toString();
  return changeWithEvent(
    tx,
    (db) =>
      db
        .updateTable("user_messages")
        .set((eb) => ({ flags: eb("flags", "|", eb.val(flag)) }))
        .where("user_id", "=", userId)
        .where((eb) => eb(eb("flags", "&", eb.val(flag)), "=", "0"))
        .where("message_id", "in", (eb) => {
          const messages = eb.selectFrom("messages").select("id");
          if ("senderId" in scope) return messages.where("sender_id", "=", scope.senderId);
          const inChannel = messages.where("channel_id", "=", scope.channelId);
          const { topic } = scope;
          return topic === undefined
            ? inChannel
            : inChannel.where((m) => m(m.fn("lower", ["topic"]), "=", topic.toLowerCase()));
        })
        .returning("message_id"),
    event,
  );
}
