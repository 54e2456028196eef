import type { Tx } from "../db/kysely";
import type { Database } from "../db/database";
import { JsonableError, ResourceNotFoundError } from "@repo/envelope";
import type { ScheduledMessage } from "../gen/prisma/client";
import { sendEvent } from "../realtime/queue";
import type { AuthedUser } from "../caches/auth";
import {
  claimDueScheduledMessage,
  deleteScheduledMessage,
  insertScheduledMessage,
  lockPendingScheduledMessage,
  pendingScheduledCount,
  pendingScheduledMessagesOf,
  updateScheduledMessage,
} from "../db/queries/scheduled-messages";
import { accountById } from "../db/queries/users";
import { notificationBot } from "../db/queries/bots";
import { dueRound } from "../db/queries/due-rounds";
import { checkCap } from "./caps";
import { type DeliveryOutcome, deliverInRounds } from "../lib/concurrency";
import {
  type OutgoingMessage,
  checkOutgoing,
  sendBotMessage,
  sendCheckedMessage,
} from "./message-send";
import { renderPreview } from "./render-context";

/**
 * Scheduled messages (feature level 179): a message its sender asks the server
 * to send later, checked as a send is when it is scheduled and again when it
 * is sent; sent at its time exactly once across replicas and restarts (as
 * reminders are), or marked failed with Zulip's notice to its sender.
 */

/** Where a scheduled message goes, as POST /scheduled_messages takes it. */
export type ScheduledDestination =
  { kind: "channel"; to: number; topic: string } | { kind: "direct"; to: readonly number[] };

/** A scheduled message on the wire (Zulip's `ScheduledMessage` object). */
export function scheduledMessageView(row: ScheduledMessage) {
  return {
    scheduled_message_id: row.id,
    ...(row.channel_id === null
      ? { type: "private" as const, to: row.to_user_ids }
      : { type: "stream" as const, to: row.channel_id, topic: row.topic }),
    content: row.content,
    rendered_content: row.rendered_content,
    scheduled_delivery_timestamp: Math.floor(row.scheduled_timestamp.getTime() / 1000),
    failed: row.failed,
  };
}

/** The message a scheduled one sends, as POST /messages would take it. */
function outgoingOf(destination: ScheduledDestination, content: string): OutgoingMessage {
  return destination.kind === "channel"
    ? { kind: "channel", to: destination.to, topic: destination.topic, content }
    : { kind: "direct", to: destination.to, content };
}

/** The destination a stored scheduled message has. */
function destinationOf(row: ScheduledMessage): ScheduledDestination {
  return row.channel_id === null
    ? { kind: "direct", to: row.to_user_ids }
    : { kind: "channel", to: row.channel_id, topic: row.topic };
}

/** Refuses a delivery time that is not in the future (Zulip's message). */
function checkFuture(deliverAt: number): Date {
  const when = new Date(deliverAt * 1000);
  if (!(when.getTime() > Date.now()))
    throw new JsonableError("Scheduled delivery time must be in the future.");
  return when;
}

/**
 * Checks a scheduled message as a send now would be (destination,
 * permissions, content) and renders it; answers its columns.
 */
async function checkScheduled(
  db: Database,
  user: AuthedUser,
  destination: ScheduledDestination,
  content: string,
) {
  const checked = await checkOutgoing(db, user, outgoingOf(destination, content));
  const rendered = await renderPreview(db, user, checked.content);
  return {
    channel_id: checked.destination.kind === "channel" ? checked.destination.channel.id : null,
    topic: checked.destination.kind === "channel" ? checked.destination.topic : "",
    to_user_ids:
      destination.kind === "direct" ? [...new Set(destination.to)].sort((a, b) => a - b) : [],
    content: checked.content,
    rendered_content: rendered,
  };
}

/**
 * POST /scheduled_messages: checks the message as POST /messages would and
 * stores it with its time (at most `cap` pending per person);
 * `scheduled_messages` `add` to the sender's clients. Returns its id.
 */
export async function doCreateScheduledMessage(
  db: Database,
  user: AuthedUser,
  request: {
    destination: ScheduledDestination;
    content: string;
    deliverAt: number;
    readBySender: boolean | undefined;
  },
  cap: number,
): Promise<number> {
  const when = checkFuture(request.deliverAt);
  const columns = await checkScheduled(db, user, request.destination, request.content);
  return db.transaction(async (tx) => {
    checkCap(await pendingScheduledCount(tx, user.id), 1, cap, "scheduled messages");
    const row = await insertScheduledMessage(tx, {
      ...columns,
      realm_id: user.realm_id,
      sender_id: user.id,
      scheduled_timestamp: when,
      read_by_sender: request.readBySender ?? null,
    });
    await sendEvent(tx, [user.id], {
      type: "scheduled_messages",
      op: "add",
      scheduled_messages: [scheduledMessageView(row)],
    });
    return row.id;
  });
}

/** GET /scheduled_messages and register's `scheduled_messages`: the caller's, not yet sent, soonest first. */
export async function listScheduledMessages(tx: Tx, userId: number) {
  return (await pendingScheduledMessagesOf(tx, userId)).map(scheduledMessageView);
}

/** What PATCH /scheduled_messages/{id} asks to change (undefined: unchanged). */
export interface ScheduledMessageChange {
  type?: "channel" | "direct" | undefined;
  to?: number | readonly number[] | undefined;
  topic?: string | undefined;
  content?: string | undefined;
  deliverAt?: number | undefined;
}

const notFound = () => new ResourceNotFoundError("Scheduled message does not exist");

/**
 * PATCH /scheduled_messages/{id}: changes the caller's scheduled message (its
 * destination, content or time), checked again as a send; a failed one needs
 * a new time and is scheduled again. `scheduled_messages` `update`.
 */
export async function doUpdateScheduledMessage(
  db: Database,
  user: AuthedUser,
  id: number,
  change: ScheduledMessageChange,
): Promise<void> {
  if (Object.values(change).every((value) => value === undefined))
    throw new JsonableError("Nothing to change");
  if (change.type !== undefined && change.to === undefined)
    throw new JsonableError("Recipient required when updating type of scheduled message.");
  const current = await lockFree(db, user.id, id);
  if (current.failed && change.deliverAt === undefined)
    throw new JsonableError("Scheduled delivery time must be in the future.");
  const when = change.deliverAt === undefined ? undefined : checkFuture(change.deliverAt);
  const destination = changedDestination(destinationOf(current), change);
  const columns = await checkScheduled(db, user, destination, change.content ?? current.content);
  await db.transaction(async (tx) => {
    if ((await lockPendingScheduledMessage(tx, id, user.id)) === undefined) throw notFound();
    const row = await updateScheduledMessage(tx, id, {
      ...columns,
      ...(when === undefined ? {} : { scheduled_timestamp: when }),
      failed: false,
      failure_message: null,
    });
    await sendEvent(tx, [user.id], {
      type: "scheduled_messages",
      op: "update",
      scheduled_message: scheduledMessageView(row),
    });
  });
}

/** The caller's scheduled message `id` not yet sent, read without a lock; else 404. */
async function lockFree(db: Database, userId: number, id: number): Promise<ScheduledMessage> {
  const row = (await pendingScheduledMessagesOf(db, userId)).find((m) => m.id === id);
  if (row === undefined) throw notFound();
  return row;
}

/** A scheduled message's destination after `change` (Zulip's rules for changing its type). */
function changedDestination(
  current: ScheduledDestination,
  change: ScheduledMessageChange,
): ScheduledDestination {
  const kind = change.type ?? current.kind;
  if (kind === "channel") {
    if (change.type === "channel" && current.kind !== "channel" && change.topic === undefined)
      throw new JsonableError("Topic required when updating scheduled message type to channel.");
    const to = change.to ?? current.to;
    if (typeof to !== "number") throw new JsonableError("Invalid data type for channel");
    const topic = change.topic ?? (current.kind === "channel" ? current.topic : "");
    return { kind, to, topic };
  }
  const to = change.to ?? current.to;
  return { kind, to: typeof to === "number" ? [to] : to };
}

/** DELETE /scheduled_messages/{id}: the caller's scheduled message, never sent then; `scheduled_messages` `remove`. */
export async function doDeleteScheduledMessage(
  db: Database,
  user: AuthedUser,
  id: number,
): Promise<void> {
  await db.transaction(async (tx) => {
    if ((await lockPendingScheduledMessage(tx, id, user.id)) === undefined) throw notFound();
    await deleteScheduledMessage(tx, id);
    await sendEvent(tx, [user.id], {
      type: "scheduled_messages",
      op: "remove",
      scheduled_message_id: id,
    });
  });
}

/** Most senders one round of {@link deliverDueScheduledMessages} serves (one message each). */
const ROUND_SENDERS = 500;

/**
 * Sends the scheduled messages due at `now`, in rounds of one per sender
 * (the earliest due first), until none is due or `budgetMs` has passed.
 * Each is its own transaction: the row is claimed with `FOR UPDATE SKIP
 * LOCKED`, the message checked again and stored as its sender's, and the row
 * marked sent, all together, so each is sent exactly once. Returns how many
 * were sent.
 */
export async function deliverDueScheduledMessages(
  db: Database,
  now: Date,
  budgetMs = 4000,
): Promise<number> {
  return deliverInRounds(
    () => dueRound(db, "scheduled_messages", now, ROUND_SENDERS),
    (id) => deliverScheduledMessage(db, id, now),
    budgetMs,
  );
}

/**
 * Sends scheduled message `id` in one transaction, if it is still due and
 * nobody else took it. One its sender could no longer send (the channel is
 * gone, a permission changed, the sender was deactivated) is marked failed
 * with the reason, its sender told by the notification bot, as Zulip does.
 */
function deliverScheduledMessage(db: Database, id: number, now: Date): Promise<DeliveryOutcome> {
  return db.transaction(async (tx) => {
    const row = await claimDueScheduledMessage(tx, id, now);
    if (row === undefined) return "taken";
    const sender = await accountById(tx, row.sender_id);
    let messageId: number;
    try {
      if (sender === undefined || !sender.is_active || sender.realm_deactivated)
        throw new JsonableError("Account is deactivated");
      const checked = await checkOutgoing(tx, sender, outgoingOf(destinationOf(row), row.content));
      messageId = await sendCheckedMessage(tx, sender, checked);
    } catch (error) {
      if (!(error instanceof JsonableError)) throw error;
      await failScheduledMessage(tx, row, error.message);
      return "failed";
    }
    await updateScheduledMessage(tx, row.id, { delivered: true, delivered_message_id: messageId });
    await sendEvent(tx, [row.sender_id], {
      type: "scheduled_messages",
      op: "remove",
      scheduled_message_id: row.id,
    });
    return "sent";
  });
}

/** Marks `row` failed with `reason` inside `tx`, telling its sender (an update event and a notice). */
async function failScheduledMessage(tx: Tx, row: ScheduledMessage, reason: string): Promise<void> {
  const failed = await updateScheduledMessage(tx, row.id, {
    failed: true,
    failure_message: reason,
  });
  await sendEvent(tx, [row.sender_id], {
    type: "scheduled_messages",
    op: "update",
    scheduled_message: scheduledMessageView(failed),
  });
  const bot = await notificationBot(tx, row.realm_id);
  const sender = await accountById(tx, row.sender_id);
  if (bot === null || sender === undefined || !sender.is_active) return;
  await sendBotMessage(
    tx,
    bot,
    { kind: "direct", userIds: [row.sender_id] },
    [
      `The message you scheduled for <time:${row.scheduled_timestamp.toISOString()}> was not sent because of the following error:`,
      "",
      `> ${reason}`,
      "",
      "[View scheduled messages](#scheduled)",
    ].join("\n"),
  );
}
