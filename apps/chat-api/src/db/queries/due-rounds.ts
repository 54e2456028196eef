import { sql } from "kysely";
import type { Tx } from "../kysely";

/** The tables of what is sent at a time of its own, and the column of whose each row is. */
const OWNER = { reminders: "user_id", scheduled_messages: "sender_id" } as const;

/**
 * One round of the rows of `table` due at `now`: each owner's earliest, at
 * most `limit` owners, the earliest due first. An owner with hundreds due
 * gets one per round like everyone else.
 */
export async function dueRound(
  tx: Tx,
  table: keyof typeof OWNER,
  now: Date,
  limit: number,
): Promise<number[]> {
  const owner = sql.ref(OWNER[table]);
  const rows = await tx.q
    .selectFrom((eb) =>
      eb
        .selectFrom(table)
        .distinctOn(owner)
        .select(["id", "scheduled_timestamp"])
        .where("delivered", "=", false)
        .where("failed", "=", false)
        .where("scheduled_timestamp", "<=", now)
        .orderBy(owner)
        .orderBy("scheduled_timestamp")
        .orderBy("id")
        .as("firsts"),
    )
    .select("id")
    .orderBy("scheduled_timestamp")
    .orderBy("id")
    .limit(limit)
    .execute();
  return rows.map((r) => r.id);
}
