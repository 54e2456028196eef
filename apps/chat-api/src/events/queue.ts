import type { Tx } from "../db/kysely";
import type { Database } from "../db/database";
import { randomUUID } from "node:crypto";
import { BadEventQueueIdError, JsonableError } from "@repo/envelope";
import type { Prisma } from "../gen/prisma/client";
import { EVENTS_CHANNEL, type EventHub } from "./hub";
import { eventSpan, queueShape, shapeEvents } from "./shape";
import { lockUser } from "../db/queries/users";
import { writeEvent, writeHeartbeat } from "../db/queries/events";

/** An event as clients receive it (`id` is added per queue when it is read). */
export interface ChatEvent {
  type: string;
  [field: string]: unknown;
}

/**
 * Writes `event` to every queue of `userIds` that asked for its type, inside
 * the transaction `tx` that makes the change it describes: the change and
 * its events commit together or not at all. Each queue numbers its events
 * (its `last_event_id` counter, row-locked by the UPDATE); the NOTIFY of each
 * queue id goes out on commit and wakes its long-polls on every replica.
 */
export async function sendEvent(
  tx: Tx,
  userIds: readonly number[],
  event: ChatEvent,
): Promise<void> {
  if (userIds.length === 0) return;
  await writeEvent(
    tx,
    userIds,
    event.type,
    JSON.stringify(event),
    EVENTS_CHANNEL,
    eventSpan(event),
  );
}

/** The active users of a realm: the audience of realm-wide events. */
export async function realmAudience(tx: Tx, realmId: number): Promise<number[]> {
  const rows = await tx.prisma.user.findMany({
    where: { realm_id: realmId, is_active: true },
    select: { id: true },
  });
  return rows.map((r) => r.id);
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

/** Creates an event queue for `user` (collecting its oldest past the cap); returns its id. */
export async function createQueue(
  db: Database,
  user: { id: number; realm_id: number },
  queue: NewQueue,
): Promise<string> {
  const id = randomUUID();
  await db.transaction(async (tx) => {
    // One registration at a time per user, so that concurrent ones cannot pass the cap
    // (NO KEY UPDATE: rows that merely reference the user, such as new messages, do not wait).
    await lockUser(tx, user.id);
    const excess = await tx.prisma.eventQueue.findMany({
      where: { user_id: user.id },
      orderBy: [{ last_poll_time: "desc" }, { date_created: "desc" }],
      skip: queue.maxPerUser - 1,
      select: { id: true },
    });
    if (excess.length > 0)
      await tx.prisma.eventQueue.deleteMany({ where: { id: { in: excess.map((q) => q.id) } } });
    await tx.prisma.eventQueue.create({
      data: {
        id,
        user_id: user.id,
        realm_id: user.realm_id,
        event_types: [...(queue.eventTypes ?? [])],
        all_event_types: queue.eventTypes === undefined,
        options: queue.options,
      },
    });
  });
  return id;
}

/** Deletes one of `userId`'s queues; else `BAD_EVENT_QUEUE_ID`. */
export async function deleteQueue(db: Database, userId: number, queueId: string): Promise<void> {
  const { count } = await db.prisma.eventQueue.deleteMany({
    where: { id: queueId, user_id: userId },
  });
  if (count === 0) throw badQueue(queueId);
}

/** What GET /events waits with. */
export interface Poll {
  queueId: string;
  /** Events up to this id are acknowledged (and deleted); undefined = none. */
  lastEventId: number | undefined;
  dontBlock: boolean;
  heartbeatMs: number;
  /** Aborts when the client goes away. */
  signal?: AbortSignal;
}

/**
 * GET /events: discards the acknowledged events, then answers the newer ones
 * at once, or waits for some (woken through the {@link EventHub}); after
 * `heartbeatMs` without any, writes and answers a heartbeat event.
 */
export async function pollEvents(
  db: Database,
  hub: EventHub,
  userId: number,
  poll: Poll,
): Promise<ChatEvent[]> {
  const { queueId } = poll;
  const after = poll.lastEventId ?? -1;
  const [touched] = await db.prisma.eventQueue.updateManyAndReturn({
    where: { id: queueId, user_id: userId },
    data: { last_poll_time: new Date() },
    select: { options: true },
  });
  if (touched === undefined) throw badQueue(queueId);
  const shape = queueShape(touched.options);
  if (poll.lastEventId !== undefined) {
    await db.prisma.event.deleteMany({
      where: { queue_id: queueId, id: { lte: poll.lastEventId } },
    });
  }
  const read = async (): Promise<ChatEvent[]> => {
    const rows = await db.prisma.event.findMany({
      where: { queue_id: queueId, id: { gt: after } },
      orderBy: { id: "asc" },
    });
    return rows
      .flatMap((row) => shapeEvents(row.payload as ChatEvent, shape, row.id))
      .filter((event) => event.id > after);
  };
  const deadline = Date.now() + poll.heartbeatMs;
  for (;;) {
    const watch = hub.watch(queueId);
    const events = await read();
    if (events.length > 0 || poll.dontBlock) {
      watch.cancel();
      return events;
    }
    const remaining = deadline - Date.now();
    const woken = remaining > 0 && (await watch.until(remaining, poll.signal));
    if (woken) continue;
    watch.cancel();
    if (poll.signal?.aborted === true || hub.stopping) return [];
    await db.transaction(async (tx) => {
      const queue = await tx.prisma.eventQueue.findFirst({
        where: { id: queueId, user_id: userId },
      });
      if (queue === null) throw badQueue(queueId);
      await tx.prisma.eventQueue.update({
        where: { id: queueId },
        data: { last_poll_time: new Date() },
      });
      await writeHeartbeat(tx, queueId);
    });
    return read();
  }
}

/** Deletes the queues nobody polled for `timeoutMs`, with their events; returns how many. */
export async function collectIdleQueues(db: Database, timeoutMs: number): Promise<number> {
  const { count } = await db.prisma.eventQueue.deleteMany({
    where: { last_poll_time: { lt: new Date(Date.now() - timeoutMs) } },
  });
  return count;
}
