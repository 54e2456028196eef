import { sql } from "kysely";
import type { Tx } from "../kysely";

/** A new submessage's id (the submessages' sequence), taken before its message is written. */
export async function newSubmessageId(tx: Tx): Promise<number> {
  const result = await sql<{ id: number }>`
    SELECT nextval(pg_get_serial_sequence('submessages', 'id'))::int AS id`.execute(tx.q);
  const row = result.rows[0];
  if (row === undefined) throw new Error("no submessage id");
  return row.id;
}

/** Stores a submessage (its id given, or the next). Returns its id. */
export async function insertSubmessage(
  tx: Tx,
  row: { id?: number; message_id: number; sender_id: number; msg_type: string; content: string },
): Promise<number> {
  const inserted = await tx.q
    .insertInto("submessages")
    .values(row)
    .returning("id")
    .executeTakeFirstOrThrow();
  return inserted.id;
}

/**
 * What a message's submessages say of its widget: the first one (the widget,
 * if its sender is the message's) with its sender, and how many there are.
 */
export async function widgetState(
  tx: Tx,
  messageId: number,
): Promise<{ first: { sender_id: number; content: string } | undefined; count: number }> {
  const row = await tx.q
    .selectFrom("submessages")
    .select((eb) => [
      eb.fn.countAll<string>().as("count"),
      sql<number | null>`(array_agg(sender_id ORDER BY id))[1]`.as("sender_id"),
      sql<string | null>`(array_agg(content ORDER BY id))[1]`.as("content"),
    ])
    .where("message_id", "=", messageId)
    .executeTakeFirstOrThrow();
  return {
    first:
      row.sender_id === null || row.content === null
        ? undefined
        : { sender_id: row.sender_id, content: row.content },
    count: Number(row.count),
  };
}
