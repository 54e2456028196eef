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
    // A function of type void is read as text: Prisma's raw query reads no void column.
    .selectNoFrom((eb) =>
      eb.cast(eb.fn("pg_notify", [eb.val(channel), eb.val(payload)]), "text").as("sent"),
    )
    .execute();
}
