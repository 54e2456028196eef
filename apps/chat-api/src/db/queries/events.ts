import { type Kysely, type QueryCreator, sql } from "kysely";
import type { DB } from "../../gen/kysely/tables";
import type { Tx } from "../kysely";
import { intArrayLiteral } from "./text";

/**
 * The NOTIFY channel of the event system (one LISTEN connection per
 * replica), whose payloads say: `log` (the log has events without a number),
 * `seq:N` (the log is numbered up to N), `gone:ID` (queue ID was deleted).
 */
export const EVENTS_CHANNEL = "chat_events";
/** The payload of "the log has events without a number". */
export const LOG_NOTICE = "log";

/** The sequencer's advisory lock: one numbering round at a time, across replicas. */
const SEQUENCER_LOCK = 0x636861745f736571n; // "chat_seq"

/** Most events one numbering round or one read takes. */
export const EVENT_BATCH = 2000;

/** An event of the log, numbered. */
export interface LoggedEvent {
  seq: number;
  span: number;
  user_ids: number[];
  event_type: string;
  payload: unknown;
}

/** An event to append to the log: its recipients, type, JSON text and span. */
export interface NewEvent {
  userIds: readonly number[];
  type: string;
  payload: string;
  span: number;
}

/**
 * Appends `events` to the log in one statement, in their order, and NOTIFYs
 * the sequencers on commit (PostgreSQL sends a notification once per
 * transaction, however many events it wrote). No queue is touched or locked.
 */
export function appendEventsQuery(q: Kysely<DB>, events: readonly NewEvent[]) {
  return (
    q
      .with("written", (db) => logInsert(db, events))
      .selectFrom("written")
      .select(logNotice)
      // The inserts run to completion whatever the query reads: one notification is asked for.
      .limit(1)
  );
}

/**
 * The INSERT of `events` into the log, in their order, returning their ids:
 * the one way events are written, as a data-modifying CTE of
 * {@link appendEventsQuery} or of a statement that writes the change they
 * describe ({@link insertMessageRows}), read through {@link logNotice}.
 */
export function logInsert(db: QueryCreator<DB>, events: readonly NewEvent[]) {
  return db
    .insertInto("event_log")
    .values(
      events.map((event) => ({
        user_ids: sql<number[]>`${intArrayLiteral(event.userIds)}::int[]`,
        event_type: event.type,
        payload: sql<string>`cast(${event.payload} as jsonb)`,
        span: event.span,
      })),
    )
    .returning("id");
}

/**
 * The INSERT of `event` with its list `field` set to what a CTE of the same
 * statement returned (`source`, its column `column`), ascending, and only
 * when it returned something: an event that names what its statement
 * changed (a flag change names the messages whose flag changed), written by
 * that statement. `event.payload` holds the rest (the list's value there is
 * replaced). Returns its id, read through {@link logNotice} as for
 * {@link logInsert}.
 */
export function logInsertNaming(
  db: QueryCreator<DB>,
  event: NewEvent,
  field: string,
  source: string,
  column: string,
) {
  const value = sql.ref(`${source}.${column}`);
  return db
    .insertInto("event_log")
    .columns(["user_ids", "event_type", "payload", "span"])
    .expression(
      sql`SELECT ${intArrayLiteral(event.userIds)}::int[], ${event.type},
                 jsonb_set(cast(${event.payload} as jsonb), ${`{${field}}`}::text[], named.list),
                 ${event.span}::int
          FROM (SELECT jsonb_agg(${value} ORDER BY ${value}) AS list FROM ${sql.table(source)}) AS named
          WHERE named.list IS NOT NULL`,
    )
    .returning("id");
}

/** The column that asks for the sequencers' notification (`log`), selected from a {@link logInsert}. */
export const logNotice = sql<string>`cast(pg_notify(${EVENTS_CHANNEL}, ${LOG_NOTICE}) as text)`.as(
  "sent",
);

/** {@link appendEventsQuery}, run on `tx` (the transaction of the change the events describe). */
export async function appendEvents(tx: Tx, events: readonly NewEvent[]): Promise<void> {
  if (events.length > 0) await appendEventsQuery(tx.q, events).execute();
}

/**
 * One numbering round, in one statement (the migration's
 * `chat_number_events`): under the sequencer's advisory lock (rounds of all
 * replicas run one after the other; senders never wait for it), gives the
 * committed events without a number the next ones, in the order they were
 * written, each taking its `span`, and NOTIFYs the new last number. Returns
 * the events it numbered, in order (none when there was nothing to number).
 * Run outside a transaction: the statement's own holds the lock.
 */
export async function sequenceEvents(tx: Tx): Promise<LoggedEvent[]> {
  const result = await sql<LoggedEvent>`
    SELECT seq, span, array_to_json(user_ids) AS user_ids, event_type, payload
    FROM chat_number_events(${EVENT_BATCH}, ${SEQUENCER_LOCK}, ${EVENTS_CHANNEL})`.execute(tx.q);
  return result.rows;
}

/** The log's last number and how far it has been pruned. */
export async function logPosition(tx: Tx): Promise<{ last: number; pruned: number }> {
  const result = await sql<{ last: number; pruned: number }>`
    SELECT last_seq::float8 AS last, pruned_upto::float8 AS pruned
    FROM event_sequencer WHERE id = 1`.execute(tx.q);
  return result.rows[0] ?? { last: 0, pruned: 0 };
}

/** An event's columns as a replica holds them (the recipients as JSON: the driver parses it natively). */
const logColumns = sql`seq::float8 AS seq, span, array_to_json(user_ids) AS user_ids, event_type, payload`;

/** The numbered events after `after`, in order (at most {@link EVENT_BATCH}). */
export async function readLog(tx: Tx, after: number): Promise<LoggedEvent[]> {
  const result = await sql<LoggedEvent>`
    SELECT ${logColumns} FROM event_log
    WHERE seq > ${after} ORDER BY seq LIMIT ${EVENT_BATCH}`.execute(tx.q);
  return result.rows;
}

/** The numbered events after `after` for `userId`, in order (at most {@link EVENT_BATCH}). */
export async function readLogFor(tx: Tx, userId: number, after: number): Promise<LoggedEvent[]> {
  const result = await sql<LoggedEvent>`
    SELECT ${logColumns} FROM event_log
    WHERE seq > ${after} AND ${userId} = ANY(user_ids)
    ORDER BY seq LIMIT ${EVENT_BATCH}`.execute(tx.q);
  return result.rows;
}

/** A queue as polls need it. */
export interface QueueRow {
  id: string;
  user_id: number;
  event_types: string[];
  all_event_types: boolean;
  options: unknown;
  last_event_id: number;
}

/** Queue `queueId`, if it exists. */
export async function queueById(tx: Tx, queueId: string): Promise<QueueRow | undefined> {
  const result = await sql<QueueRow>`
    SELECT id, user_id, event_types, all_event_types, options, last_event_id::float8 AS last_event_id
    FROM event_queues WHERE id = ${queueId}`.execute(tx.q);
  return result.rows[0];
}

/**
 * Writes what polls noted since the last call, in one statement: each
 * queue's last poll time and acknowledged event (never moved back).
 */
export async function writeQueueBookkeeping(
  tx: Tx,
  entries: readonly { id: string; ack: number; polledAt: Date }[],
): Promise<void> {
  if (entries.length === 0) return;
  // Entries in id order: concurrent batches (two replicas) take row locks in the same order.
  const sorted = [...entries].sort((x, y) => (x.id < y.id ? -1 : x.id > y.id ? 1 : 0));
  await sql`
    UPDATE event_queues AS q
    SET last_poll_time = greatest(q.last_poll_time, v.polled_at),
        last_event_id = greatest(q.last_event_id, v.ack)
    FROM unnest(
      ${sorted.map((e) => e.id)}::varchar[],
      ${sorted.map((e) => e.ack)}::bigint[],
      ${sorted.map((e) => e.polledAt.toISOString())}::timestamptz[]
    ) AS v(id, ack, polled_at)
    WHERE q.id = v.id`.execute(tx.q);
}

/** A new queue's row (its times and position are the database's). */
export interface NewQueueRow {
  id: string;
  user_id: number;
  realm_id: number;
  event_types: string[];
  all_event_types: boolean;
  options: unknown;
}

/**
 * Creates queue `queue` in one statement (the migration's
 * `chat_create_queue`): under its user's row lock, deletes (NOTIFYing each
 * id) the user's queues beyond the newest `keep` (the ones polled least
 * recently), then inserts it at the log's last number, which it returns: the
 * queue receives the events numbered after it. Concurrent registrations of
 * one user run one after the other and count each other's queues.
 */
export async function insertQueue(tx: Tx, queue: NewQueueRow, keep: number): Promise<number> {
  const result = await sql<{ start: number | null }>`
    SELECT chat_create_queue(${queue.id}, ${queue.user_id}, ${queue.realm_id},
      ${queue.event_types}::text[], ${queue.all_event_types},
      ${JSON.stringify(queue.options)}::jsonb, ${keep}, ${EVENTS_CHANNEL}) AS start`.execute(tx.q);
  const start = result.rows[0]?.start;
  if (start === undefined || start === null) throw new Error("chat_create_queue returned no row");
  return start;
}

/** Deletes queues matching `where` (SQL), NOTIFYing each one's id; returns how many. */
async function deleteQueuesWhere(tx: Tx, where: ReturnType<typeof sql>): Promise<number> {
  const result = await sql<{ sent: string }>`
    WITH gone AS (DELETE FROM event_queues WHERE ${where} RETURNING id)
    SELECT pg_notify(${EVENTS_CHANNEL}, 'gone:' || id)::text AS sent FROM gone`.execute(tx.q);
  return result.rows.length;
}

/** Deletes queue `queueId` if it is `userId`'s; returns whether it did. */
export async function deleteUserQueue(tx: Tx, userId: number, queueId: string): Promise<boolean> {
  return (await deleteQueuesWhere(tx, sql`id = ${queueId} AND user_id = ${userId}`)) > 0;
}

/** Deletes every queue of the users `userIds` (their polls end, on every replica); answers how many. */
export async function deleteQueuesOfUsers(tx: Tx, userIds: readonly number[]): Promise<number> {
  if (userIds.length === 0) return 0;
  return deleteQueuesWhere(tx, sql`user_id = ANY(${[...userIds]}::int[])`);
}

/**
 * Deletes the queues nobody polled for their idle timeout (`idle_timeout_seconds`
 * of their options, else `defaultSeconds`) before `now`; returns how many.
 */
export async function deleteIdleQueues(tx: Tx, now: Date, defaultSeconds: number): Promise<number> {
  return deleteQueuesWhere(
    tx,
    sql`last_poll_time < ${now.toISOString()}::timestamptz - make_interval(secs => coalesce((options->>'idle_timeout_seconds')::float8, ${defaultSeconds}::float8))`,
  );
}

/** The longest idle timeout a queue asked for, in seconds (0 when none did). */
export async function longestQueueTimeout(tx: Tx): Promise<number> {
  const result = await sql<{ longest: number }>`
    SELECT coalesce(max((options->>'idle_timeout_seconds')::float8), 0)::float8 AS longest
    FROM event_queues`.execute(tx.q);
  return result.rows[0]?.longest ?? 0;
}

/**
 * Prunes the log: the events every queue has acknowledged (as last
 * written), and those older than `before` whoever still waits for them
 * (their queues are then told BAD_EVENT_QUEUE_ID). Returns how many.
 */
export async function pruneLog(tx: Tx, before: Date): Promise<number> {
  const result = await sql<{ pruned: number }>`
    WITH bound AS (
      SELECT greatest(
        coalesce((SELECT min(last_event_id) FROM event_queues),
                 (SELECT last_seq FROM event_sequencer WHERE id = 1)),
        coalesce((SELECT max(seq) FROM event_log WHERE date_created < ${before.toISOString()}::timestamptz), 0)
      ) AS upto
    ),
    gone AS (DELETE FROM event_log WHERE seq <= (SELECT upto FROM bound) RETURNING seq),
    moved AS (
      UPDATE event_sequencer
      SET pruned_upto = greatest(pruned_upto, (SELECT coalesce(max(seq), 0) FROM gone))
      WHERE id = 1 RETURNING pruned_upto
    )
    SELECT (SELECT count(*) FROM gone)::float8 AS pruned FROM moved`.execute(tx.q);
  return result.rows[0]?.pruned ?? 0;
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
