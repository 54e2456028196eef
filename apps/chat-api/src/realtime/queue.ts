import type { Tx } from "../db/kysely";
import type { Database } from "../db/database";
import { randomUuid } from "../lib/random-key";
import { BadEventQueueIdError, JsonableError } from "@repo/envelope";
import type { Prisma } from "../gen/prisma/client";
import type { Client, Watch } from "./polls";
import { type EventHub, type HeldEvent, isFor } from "./hub";
import type { QueueInfo } from "./queue-directory";
import { eventSpan, shapedTexts } from "./shape";
import type { ChatEvent } from "./event";
import {
  type NewEvent,
  appendEvents,
  deleteIdleQueues,
  longestQueueTimeout,
  deleteUserQueue,
  insertQueue,
  logPosition,
  pruneLog,
  readLogFor,
} from "../db/queries/events";

/**
 * Appends `event` for `userIds` to the event log, inside the transaction
 * `tx` that makes the change it describes: the change and its event commit
 * together or not at all. One row whatever the audience, and no queue
 * locked: the queues of those users that asked for its type read it once it
 * is numbered ({@link EventHub}).
 */
export async function sendEvent(
  tx: Tx,
  userIds: readonly number[],
  event: ChatEvent,
): Promise<void> {
  await sendEvents(tx, [{ userIds, event }]);
}

/** {@link sendEvent} for several events, in their order, in one statement. */
export async function sendEvents(
  tx: Tx,
  events: readonly { userIds: readonly number[]; event: ChatEvent }[],
): Promise<void> {
  const rows = logRows(events);
  if (rows.length === 0) return;
  await appendEvents(tx, rows);
  await tx.wroteEvents();
}

/**
 * The log rows of `events` (those with recipients), for a statement that
 * writes them with the change they describe (`insertMessageRows`, after
 * which its caller calls `tx.wroteEvents()`, as {@link sendEvents} does).
 */
export function logRows(
  events: readonly { userIds: readonly number[]; event: ChatEvent }[],
): NewEvent[] {
  return events
    .filter(({ userIds }) => userIds.length > 0)
    .map(({ userIds, event }) => ({
      userIds,
      type: event.type,
      payload: JSON.stringify(event),
      span: eventSpan(event),
    }));
}

/** `BAD_EVENT_QUEUE_ID` for `queueId` (unknown, another user's, deleted or collected). */
export function badQueue(queueId: string): JsonableError {
  return new BadEventQueueIdError(queueId);
}

/** Options of a new queue (what POST /register asked for). */
export interface NewQueue {
  /** Event types to receive; undefined = all. */
  eventTypes: readonly string[] | undefined;
  options: Prisma.InputJsonObject;
  /**
   * Most queues the user may hold: past it, the ones polled longest ago are
   * deleted to make room (their next poll gets BAD_EVENT_QUEUE_ID and the
   * client registers again, as after Zulip's garbage collection).
   */
  maxPerUser: number;
}

/**
 * Creates an event queue for `user` (collecting its oldest past the cap);
 * returns its id. It receives the events numbered after the log's last
 * number now.
 */
export async function createQueue(
  db: Database,
  hub: EventHub,
  user: { id: number; realm_id: number },
  queue: NewQueue,
): Promise<string> {
  const id = randomUuid();
  // The queues polled least recently are collected first: their poll times written now.
  await hub.queues.flushBookkeeping(user.id);
  const row = {
    id,
    user_id: user.id,
    realm_id: user.realm_id,
    event_types: [...(queue.eventTypes ?? [])],
    all_event_types: queue.eventTypes === undefined,
    options: queue.options,
  };
  // One statement, its own transaction: concurrent registrations of the user cannot pass the cap.
  const start = await insertQueue(db, row, queue.maxPerUser - 1);
  hub.queues.remember({ ...row, last_event_id: start });
  return id;
}

/** Deletes one of `userId`'s queues; else `BAD_EVENT_QUEUE_ID`. */
export async function deleteQueue(
  db: Database,
  hub: EventHub,
  userId: number,
  queueId: string,
): Promise<void> {
  const deleted = await db.transaction((tx) => deleteUserQueue(tx, userId, queueId));
  if (!deleted) throw badQueue(queueId);
  hub.forget(queueId);
}

/** What GET /events waits with. */
export interface Poll {
  queueId: string;
  /** Events up to this id are acknowledged; undefined = none. */
  lastEventId: number | undefined;
  dontBlock: boolean;
  heartbeatMs: number;
  /** Its client (the poll stops waiting when it goes away). */
  client?: Client;
}

/**
 * The JSON texts of `queue`'s events among `events` (numbered after
 * `after`), as its client receives them; each stored event's texts are made
 * once per shape ({@link shapedTexts}).
 */
function eventTexts(queue: QueueInfo, events: readonly HeldEvent[], after: number): string[] {
  const texts: string[] = [];
  for (const event of events) {
    if (
      event.seq <= after ||
      !isFor(event, queue.user_id) ||
      (queue.types !== undefined && !queue.types.has(event.event_type))
    )
      continue;
    // A deletion of several messages is several events: the client may have acknowledged some.
    for (const { id, text } of shapedTexts(event, queue.shape, queue))
      if (id > after) texts.push(text);
  }
  return texts;
}

/** `userId`'s queue `queueId` (from memory, else the database); else `BAD_EVENT_QUEUE_ID`. */
async function userQueue(hub: EventHub, userId: number, queueId: string): Promise<QueueInfo> {
  const queue = await hub.queues.get(queueId);
  if (queue?.user_id !== userId) throw badQueue(queueId);
  return queue;
}

/**
 * GET /events: notes the acknowledgement (written later, in a batch), then
 * answers the queue's newer events at once (from memory, or from the log
 * when the replica no longer holds them), or waits for some; after
 * `heartbeatMs` without any, answers a heartbeat. A poll that finds nothing
 * writes nothing. Returns the events' JSON texts, in order.
 */
export async function pollEvents(
  db: Database,
  hub: EventHub,
  userId: number,
  poll: Poll,
): Promise<string[]> {
  const { queueId } = poll;
  const queue = await userQueue(hub, userId, queueId);
  let ack = poll.lastEventId ?? -1;
  // Past every numbered event (a client's mistake, or malice), it counts up to the last one: else
  // the queue would wait for ids nobody sends, and its heartbeat for a log that long.
  if (ack > hub.position) ack = Math.min(ack, (await logPosition(db)).last);
  hub.queues.notePoll(queue, ack);
  const after = queue.last_event_id;
  // Events it has not acknowledged were pruned: the client must register again.
  if (after < hub.prunedUpTo) throw badQueue(queueId);
  // Events up to `scanned` were looked at and none was for the queue: a woken poll reads past them.
  let scanned = after;
  const deadline = Date.now() + poll.heartbeatMs;
  for (;;) {
    // The wait is registered before anything is awaited, so that events arriving meanwhile
    // wake it. When the replica holds the queue and its events, the look is synchronous (no
    // event can arrive during it), and a poll that finds some registers nothing.
    let watch: Watch | undefined;
    let texts: string[];
    const upTo = hub.position;
    const held = hub.queues.known(queueId) === queue ? hub.held(userId, scanned) : undefined;
    if (held !== undefined) texts = eventTexts(queue, held, after);
    else {
      const waiting = hub.polls.watch(userId, queueId, queue.types);
      watch = waiting;
      try {
        // Still there? (Deleted on any replica, it is gone from memory: the database says.)
        if (hub.queues.known(queueId) !== queue) await userQueue(hub, userId, queueId);
        const events = hub.held(userId, scanned) ?? (await readLogFor(db, userId, scanned));
        texts = eventTexts(queue, events, after);
      } catch (error) {
        waiting.cancel();
        throw error;
      }
    }
    scanned = Math.max(scanned, upTo);
    if (texts.length > 0 || poll.dontBlock) {
      watch?.cancel();
      return texts;
    }
    watch ??= hub.polls.watch(userId, queueId, queue.types);
    const remaining = deadline - Date.now();
    const woken = remaining > 0 && (await watch.until(remaining, poll.client));
    if (woken) continue;
    watch.cancel();
    if (poll.client?.gone === true || hub.stopping) return [];
    await userQueue(hub, userId, queueId);
    return [JSON.stringify({ type: "heartbeat", id: await hub.heartbeatId(after) })];
  }
}

/**
 * Deletes the queues nobody polled for their idle timeout (`timeoutMs`
 * unless they asked for another at register), and prunes the log of what
 * every queue has acknowledged and of what is older than twice the longest
 * timeout; returns how many queues.
 */
export async function collectIdleQueues(db: Database, timeoutMs: number): Promise<number> {
  const now = Date.now();
  const count = await db.transaction((tx) => deleteIdleQueues(tx, new Date(now), timeoutMs / 1000));
  const longestMs = Math.max(timeoutMs, (await longestQueueTimeout(db)) * 1000);
  await db.transaction((tx) => pruneLog(tx, new Date(now - 2 * longestMs)));
  return count;
}

/** Zulip's idle timeout of a queue registered with `idle_queue_timeout=mobile`: 12 hours. */
export const MOBILE_QUEUE_TIMEOUT_SECONDS = 12 * 60 * 60;
/** The longest idle timeout a queue may ask for (Zulip's cap): 7 days. */
export const MAX_QUEUE_TIMEOUT_SECONDS = 7 * 24 * 60 * 60;

/**
 * A queue's idle timeout from register's `idle_queue_timeout`: `mobile`, or
 * seconds (capped at 7 days); undefined for the server's default (absent, 0).
 */
export function queueTimeoutSeconds(raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  if (raw === "mobile") return MOBILE_QUEUE_TIMEOUT_SECONDS;
  if (!/^\d{1,12}$/.test(raw)) throw new JsonableError(`Invalid idle_queue_timeout`);
  const seconds = Number(raw);
  return seconds === 0 ? undefined : Math.min(seconds, MAX_QUEUE_TIMEOUT_SECONDS);
}
