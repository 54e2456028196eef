import { type Kysely, sql } from "kysely";
import type { DB } from "../../gen/kysely/tables";
import type { Tx } from "../kysely";

/** Writes a heartbeat event to queue `queueId` (numbered by the queue's counter). */
export async function writeHeartbeat(tx: Tx, queueId: string): Promise<void> {
  await tx.q
    .with("queue", (db) =>
      db
        .updateTable("event_queues")
        .set((eb) => ({ last_event_id: eb("last_event_id", "+", 1) }))
        .where("id", "=", queueId)
        .returning(["id", "last_event_id"]),
    )
    .insertInto("events")
    .columns(["queue_id", "id", "payload"])
    .expression((db) =>
      db
        .selectFrom("queue")
        .select((eb) => [
          "queue.id",
          "queue.last_event_id",
          eb.cast(eb.val('{"type":"heartbeat"}'), "jsonb").as("payload"),
        ]),
    )
    .execute();
}

/** Sends `payload` to the listeners of `channel` when the transaction commits (pg_notify). */
export async function notify(tx: Tx, channel: string, payload: string): Promise<void> {
  await tx.q
    // The void result is cast to text, a type every driver reads.
    .selectNoFrom((eb) =>
      eb.cast(eb.fn("pg_notify", [eb.val(channel), eb.val(payload)]), "text").as("sent"),
    )
    .execute();
}

/**
 * Writes `payload` (an event of type `type`) to every queue of `userIds` that
 * asked for its type, numbered by each queue's counter (row-locked by the
 * UPDATE), and NOTIFYs each queue's id on `channel` when the transaction commits.
 * An event that a queue without `bulk_message_deletion` receives as `span`
 * events (a deletion of `span` messages, one event each, as Zulip sends them)
 * takes `span` ids of that queue's counter, the stored event the last of them.
 */
export function writeEventQuery(
  q: Kysely<DB>,
  userIds: readonly number[],
  type: string,
  payload: string,
  channel: string,
  span = 1,
) {
  const step =
    span === 1
      ? sql<number>`1`
      : sql<number>`CASE WHEN coalesce((options->>'bulk_message_deletion')::boolean, false) THEN 1 ELSE ${span} END`;
  return (
    q
      // The queues are locked in id order first: concurrent sends to overlapping
      // audiences then wait for each other instead of deadlocking.
      .with("locked", (db) =>
        db
          .selectFrom("event_queues")
          .select("id")
          .where((eb) =>
            eb.and([
              eb("user_id", "=", eb.fn.any(eb.val([...userIds]))),
              eb.or([
                eb("all_event_types", "=", true),
                eb(eb.val(type), "=", eb.fn.any("event_types")),
              ]),
            ]),
          )
          .orderBy("id")
          .forUpdate(),
      )
      .with("queues", (db) =>
        db
          .updateTable("event_queues")
          .set((eb) => ({ last_event_id: eb("last_event_id", "+", step) }))
          .where("id", "in", (eb) => eb.selectFrom("locked").select("locked.id"))
          .returning(["id", "last_event_id"]),
      )
      .with("written", (db) =>
        db
          .insertInto("events")
          .columns(["queue_id", "id", "payload"])
          .expression((db) =>
            db
              .selectFrom("queues")
              .select((eb) => [
                "queues.id",
                "queues.last_event_id",
                eb.cast(eb.val(payload), "jsonb").as("payload"),
              ]),
          )
          .returning("queue_id"),
      )
      .selectFrom("written")
      .select((eb) =>
        eb.cast(eb.fn("pg_notify", [eb.val(channel), eb.ref("queue_id")]), "text").as("sent"),
      )
  );
}

/** {@link writeEventQuery}, run on `tx`. */
export async function writeEvent(
  tx: Tx,
  userIds: readonly number[],
  type: string,
  payload: string,
  channel: string,
  span = 1,
): Promise<void> {
  await writeEventQuery(tx.q, userIds, type, payload, channel, span).execute();
}
