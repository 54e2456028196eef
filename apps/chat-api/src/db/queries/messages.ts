import type { Kysely } from "kysely";
import type { DB } from "../../gen/kysely/tables";
import type { Tx } from "../kysely";

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
