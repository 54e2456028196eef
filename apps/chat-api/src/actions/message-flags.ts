import { messagesByIds } from "../db/queries/messages";
import { flagsOn } from "../db/queries/user-messages";
import { mutedChannelIds } from "../db/queries/subscriptions";
import type { Tx } from "../db/kysely";
import type { Database } from "../db/database";
import { JsonableError } from "@repo/envelope";
import { markReadWithEvent, markReadBatch, setFlag, setFlagWithEvent } from "../db/queries/flags";
import type { NewEvent } from "../db/queries/events";
import { logRows, sendEvent } from "../realtime/queue";
import type { AuthedUser } from "../caches/auth";
import { MENTION_FLAGS, MESSAGE_FLAGS, type MessageFlag } from "../lib/message-flag-bits";
import { accessChannelById } from "./channels";
import { type WindowQuery, messageWindow } from "./message-fetch";

/** The flags a user may set and clear themself (Zulip's editable flags). */
const EDITABLE: readonly MessageFlag[] = ["read", "starred", "collapsed"];

/** The bit of an editable flag; Zulip's errors for an unknown or a non-editable one. */
function editableFlag(flag: string): bigint {
  if (!(flag in MESSAGE_FLAGS)) throw new JsonableError(`Invalid flag: '${flag}'`);
  if (!EDITABLE.includes(flag as MessageFlag))
    throw new JsonableError(`Flag not editable: '${flag}'`);
  return MESSAGE_FLAGS[flag as MessageFlag];
}

/**
 * `message_details` of a `remove` `read` event: what a client needs to count
 * the messages unread again without fetching them (Zulip's feature level 121).
 */
async function messageDetails(tx: Tx, userId: number, ids: readonly number[]) {
  const rows = await messagesByIds(tx, ids);
  const flags = await flagsOn(tx, userId, ids);
  const muted = await mutedChannelIds(tx, userId);
  return Object.fromEntries(
    rows.map((m) => {
      const mentioned = ((flags.get(m.id) ?? 0n) & MENTION_FLAGS) !== 0n;
      const detail =
        m.channel_id === null
          ? {
              type: "private",
              user_ids: (m.dm_key ?? "")
                .split(",")
                .map(Number)
                .filter((id) => id !== userId),
            }
          : {
              type: "stream",
              stream_id: m.channel_id,
              topic: m.topic,
              unmuted_stream_msg: !muted.has(m.channel_id),
            };
      return [String(m.id), mentioned ? { ...detail, mentioned } : detail];
    }),
  );
}

/**
 * Changes a flag on some of the user's messages and tells their clients, in
 * one transaction; the changed ids. Its event names the changed messages, so
 * the change and the event are one statement (made read, the most frequent
 * change of all), except when `read` is cleared: that event also carries
 * what the client needs to count the messages unread again, read in the
 * transaction after the change.
 */
async function changeFlag(
  db: Database,
  user: AuthedUser,
  ids: readonly number[],
  op: "add" | "remove",
  flag: string,
): Promise<number[]> {
  const bit = editableFlag(flag);
  const event = flagsEvent(op, flag);
  if (op === "remove" && flag === "read")
    return db.transaction(async (tx) => {
      const changed = await setFlag(tx, user.id, ids, bit, false);
      if (changed.length > 0)
        await sendEvent(tx, [user.id], {
          ...event,
          messages: changed,
          message_details: await messageDetails(tx, user.id, changed),
        });
      return changed;
    });
  return changeWithItsEvent(db, user.id, event, (row) =>
    setFlagWithEvent(db, user.id, ids, bit, op === "add", row),
  );
}

/** An `update_message_flags` event without its `messages`. */
export function flagsEvent(op: "add" | "remove", flag: string) {
  return { type: "update_message_flags", op, operation: op, flag, all: false };
}

/**
 * A change of user `userId`'s flags written with `event` in one statement:
 * `change` is given the event's row (its `messages` set by the statement to
 * the ids that changed), and the replica is told of the event when some
 * did. Answers the changed ids.
 */
export async function changeWithItsEvent(
  db: Tx,
  userId: number,
  event: ReturnType<typeof flagsEvent>,
  change: (row: NewEvent) => Promise<number[]>,
): Promise<number[]> {
  const [row] = logRows([{ userIds: [userId], event: { ...event, messages: [] } }]);
  if (row === undefined) return [];
  const changed = await change(row);
  if (changed.length > 0) await db.wroteEvents();
  return changed;
}

/**
 * POST /messages/flags: adds or removes a flag on the caller's messages among
 * `ids` (others' and unknown ids are left alone, as Zulip leaves them), in
 * one transaction with its `update_message_flags` event.
 */
export async function doUpdateFlags(
  db: Database,
  user: AuthedUser,
  ids: readonly number[],
  op: "add" | "remove",
  flag: string,
): Promise<void> {
  await changeFlag(db, user, [...new Set(ids)], op, flag);
}

/**
 * POST /messages/flags/narrow: the flag change on a window of the narrow
 * (GET /messages' anchor and counts); how many were processed and changed,
 * and where the window reached.
 */
export async function doUpdateFlagsForNarrow(
  db: Database,
  user: AuthedUser,
  query: WindowQuery,
  op: "add" | "remove",
  flag: string,
) {
  editableFlag(flag);
  const window = await messageWindow(db, user, query);
  const ids = window.rows.map((r) => r.message_id);
  const changed = await changeFlag(db, user, ids, op, flag);
  return {
    processed_count: ids.length,
    updated_count: changed.length,
    first_processed_id: ids[0] ?? null,
    last_processed_id: ids.at(-1) ?? null,
    found_oldest: window.foundOldest,
    found_newest: window.foundNewest,
    ignored_because_not_subscribed_channels: [],
  };
}

/**
 * POST /mark_stream_as_read and /mark_topic_as_read: marks the caller's
 * unread messages of a channel they can see (of one topic, any case) read,
 * with the event naming them, in one statement.
 */
export async function doMarkChannelAsRead(
  db: Database,
  user: AuthedUser,
  channelId: number,
  topic?: string,
): Promise<void> {
  const channel = await accessChannelById(db, user, channelId);
  await changeWithItsEvent(db, user.id, flagsEvent("add", "read"), (row) =>
    markReadWithEvent(db, MESSAGE_FLAGS.read, user.id, { channelId: channel.id, topic }, row),
  );
}

/** Messages marked read per transaction by mark_all_as_read. */
export const MARK_READ_BATCH = 1000;

/**
 * POST /mark_all_as_read: marks the caller's unread messages read in batches,
 * newest first, each batch its own transaction with its
 * `update_message_flags` event, until none is left (`true`) or the time
 * budget has run out after a batch (`false`; a repeat continues). At least one
 * batch always runs, so every call makes progress; no message is skipped,
 * since each batch takes the newest unread ones left.
 */
export async function doMarkAllAsRead(
  db: Database,
  user: AuthedUser,
  budgetMs: number,
  batchSize = MARK_READ_BATCH,
): Promise<boolean> {
  const deadline = Date.now() + budgetMs;
  for (;;) {
    const marked = await db.transaction(async (tx) => {
      const ids = await markReadBatch(tx, MESSAGE_FLAGS.read, user.id, batchSize);
      if (ids.length > 0) {
        await sendEvent(tx, [user.id], {
          ...flagsEvent("add", "read"),
          messages: ids.sort((a, b) => a - b),
        });
      }
      return ids.length;
    });
    if (marked < batchSize) return true;
    if (Date.now() >= deadline) return false;
  }
}
