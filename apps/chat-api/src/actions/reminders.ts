import type { Tx } from "../db/kysely";
import type { Database } from "../db/database";
import { JsonableError, ResourceNotFoundError } from "@repo/envelope";
import { checkCap } from "./caps";
import type { Reminder } from "../gen/prisma/client";
import { checkPlain, renderPlain } from "../lib/render";
import { sendEvent } from "../realtime/queue";
import type { AuthedUser } from "../caches/auth";
import { codePoints } from "../lib/text";
import { type DeliveryOutcome, deliverInRounds } from "../lib/concurrency";
import { sendBotMessage } from "./message-send";
import {
  claimDueReminder,
  deleteReminder,
  failReminder,
  insertReminder,
  lockPendingReminder,
  markReminderDelivered,
  pendingReminderCount,
  pendingRemindersOf,
} from "../db/queries/reminders";
import { messageSenders } from "../db/queries/messages";
import { holdsMessage } from "../db/queries/user-messages";
import { notificationBot } from "../db/queries/bots";
import { dueRound } from "../db/queries/due-rounds";

/** Longest reminder note (Zulip's). */
export const MAX_REMINDER_NOTE_LENGTH = 1000;

/** The text of a reminder's direct message. */
function reminderContent(
  reminder: Pick<Reminder, "message_id" | "note">,
  senderName: string,
  senderId: number,
): string {
  const lines = [
    `You requested a reminder for message #${reminder.message_id} from @_**${senderName}|${senderId}**.`,
  ];
  if (reminder.note !== null && reminder.note !== "") lines.push(`Note:\n> ${reminder.note}`);
  return lines.join("\n");
}

/** A scheduled reminder on the wire (Zulip's reminder object). */
async function reminderViews(tx: Tx, reminders: readonly Reminder[]) {
  const messages = await messageSenders(
    tx,
    reminders.map((r) => r.message_id),
  );
  const byId = new Map(messages.map((m) => [m.id, m]));
  return Promise.all(
    reminders.map(async (reminder) => {
      const message = byId.get(reminder.message_id);
      const content = reminderContent(
        reminder,
        message?.sender.full_name ?? "",
        message?.sender_id ?? 0,
      );
      return {
        reminder_id: reminder.id,
        type: "private",
        to: [reminder.user_id],
        content,
        rendered_content: await renderPlain(content),
        scheduled_delivery_timestamp: Math.floor(reminder.scheduled_timestamp.getTime() / 1000),
        failed: reminder.failed,
        reminder_target_message_id: reminder.message_id,
      };
    }),
  );
}

/**
 * POST /reminders: a reminder about a message the caller has received, for a
 * time in the future; `reminders`/`add` in the same transaction. Returns its id.
 */
export async function doCreateReminder(
  db: Database,
  user: AuthedUser,
  messageId: number,
  deliverAt: number,
  note: string | undefined,
  cap: number,
): Promise<number> {
  if (note !== undefined && codePoints(note) > MAX_REMINDER_NOTE_LENGTH)
    throw new JsonableError(`Maximum reminder note length: ${MAX_REMINDER_NOTE_LENGTH} characters`);
  if (!(await holdsMessage(db, user.id, messageId))) throw new JsonableError("Invalid message(s)");
  const [target] = await messageSenders(db, [messageId]);
  if (target === undefined) throw new JsonableError("Invalid message(s)");
  const when = new Date(deliverAt * 1000);
  if (!(when.getTime() > Date.now()))
    throw new JsonableError("Scheduled delivery time must be in the future.");
  // What it will send must render (refused now, not at delivery).
  await checkPlain(
    reminderContent(
      { message_id: messageId, note: note ?? null },
      target.sender.full_name,
      target.sender_id,
    ),
    user.id,
  );
  return db.transaction(async (tx) => {
    const held = await pendingReminderCount(tx, user.id);
    checkCap(held, 1, cap, "reminders");
    const reminder = await insertReminder(tx, {
      realm_id: user.realm_id,
      user_id: user.id,
      message_id: messageId,
      note: note ?? null,
      scheduled_timestamp: when,
    });
    await sendEvent(tx, [user.id], {
      type: "reminders",
      op: "add",
      reminders: await reminderViews(tx, [reminder]),
    });
    return reminder.id;
  });
}

/** GET /reminders: the caller's reminders not yet delivered, soonest first. */
export async function listReminders(db: Database, userId: number) {
  return reminderViews(db, await pendingRemindersOf(db, userId));
}

/** DELETE /reminders/{id}: the caller's scheduled reminder (else 404), which is then never sent. */
export async function doDeleteReminder(
  db: Database,
  user: AuthedUser,
  reminderId: number,
): Promise<void> {
  await db.transaction(async (tx) => {
    // The row lock makes a delivery in progress finish first, or find it gone.
    if (!(await lockPendingReminder(tx, reminderId, user.id)))
      throw new ResourceNotFoundError("Reminder does not exist");
    await deleteReminder(tx, reminderId);
    await sendEvent(tx, [user.id], { type: "reminders", op: "remove", reminder_id: reminderId });
  });
}

/** Most users one round of {@link deliverDueReminders} serves (one reminder each). */
const ROUND_USERS = 500;

/**
 * Delivers the reminders due at `now`, in rounds of one per user (the
 * earliest due first), until none is due or `budgetMs` has passed: so a
 * user with hundreds due delays nobody else's by more than a round. Each is
 * its own transaction: the row is claimed with `FOR UPDATE SKIP LOCKED` (a
 * scheduler on another replica skips it rather than waiting), the direct
 * message from the realm's notification bot is stored, and the reminder is
 * marked delivered, all together, so each reminder is sent exactly once.
 * Returns how many were sent.
 */
export async function deliverDueReminders(
  db: Database,
  now: Date,
  budgetMs = 4000,
): Promise<number> {
  return deliverInRounds(
    () => dueRound(db, "reminders", now, ROUND_USERS),
    (id) => deliverReminder(db, id, now),
    budgetMs,
  );
}

/**
 * Delivers reminder `id` in one transaction, if it is still due and no one
 * else took it (`taken`); one that cannot be sent is marked failed.
 */
function deliverReminder(db: Database, id: number, now: Date): Promise<DeliveryOutcome> {
  return db.transaction(async (tx) => {
    const reminder = await claimDueReminder(tx, id, now);
    if (reminder === undefined) return "taken";
    const bot = await notificationBot(tx, reminder.realm_id);
    const [target] = await messageSenders(tx, [reminder.message_id]);
    if (bot === null || target === undefined) {
      await failReminder(tx, reminder.id);
      return "failed";
    }
    let messageId: number;
    try {
      messageId = await sendBotMessage(
        tx,
        bot,
        { kind: "direct", userIds: [reminder.user_id] },
        reminderContent(reminder, target.sender.full_name, target.sender_id),
      );
    } catch (error) {
      // A reminder that cannot be sent (its render refused) is failed, not retried.
      if (!(error instanceof JsonableError)) throw error;
      await failReminder(tx, reminder.id);
      return "failed";
    }
    await markReminderDelivered(tx, reminder.id, messageId);
    await sendEvent(tx, [reminder.user_id], {
      type: "reminders",
      op: "remove",
      reminder_id: reminder.id,
    });
    return "sent";
  });
}
