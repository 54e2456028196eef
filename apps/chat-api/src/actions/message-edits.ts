import type { Tx } from "../db/kysely";
import type { Database } from "../db/database";
import { JsonableError } from "@repo/envelope";
import type { Channel, Message } from "../gen/prisma/client";
import { sendEvent } from "../events/queue";
import { type EditEntry, appendEditHistory, longestEditHistory } from "../db/queries/messages";
import type { AuthedUser } from "../lib/auth";
import { renderPlainText } from "../lib/render";
import { MESSAGE_FLAGS } from "../lib/message-flags";
import { Role, isAdministrator } from "../lib/roles";
import { checkContent, checkTopic } from "./messages";
import { linkMessageFiles } from "./uploads";
import { isGroupMember } from "./user-groups";

/** How long after sending its sender may edit a message's content (the realm's 600 s). */
export const MESSAGE_CONTENT_EDIT_LIMIT_SECONDS = 600;

/** How long after sending a message's topic may be changed by non-moderators (a week). */
export const MESSAGE_TOPIC_EDIT_LIMIT_SECONDS = 604_800;

/** Most edits one message keeps in its history; past them it cannot be edited. */
export const MAX_EDITS_PER_MESSAGE = 1000;

/**
 * Most messages one topic change moves: each statement that follows names
 * them all, well within PostgreSQL's 65,535 parameters.
 */
export const MAX_MOVED_MESSAGES = 5000;

/** Which messages a topic change takes along (Zulip's `propagate_mode`). */
export type PropagateMode = "change_one" | "change_later" | "change_all";

/** The caller's message `messageId` with its channel, and who has it; `Invalid message(s)` else. */
async function accessMessage(tx: Tx, user: AuthedUser, messageId: number) {
  const message = await tx.prisma.message.findFirst({
    where: { id: messageId, user_messages: { some: { user_id: user.id } } },
    include: { channel: true },
  });
  if (message === null) throw new JsonableError("Invalid message(s)");
  return message;
}

/** Everyone who has one of the messages `ids` (their recipients, active). */
async function holders(tx: Tx, ids: readonly number[]): Promise<number[]> {
  const rows = await tx.prisma.userMessage.findMany({
    where: { message_id: { in: [...ids] }, user: { is_active: true } },
    select: { user_id: true },
    distinct: ["user_id"],
  });
  return rows.map((r) => r.user_id);
}

const inGroup = (tx: Tx, groupId: number, userId: number) =>
  isGroupMember(tx, groupId, userId, false);

/**
 * DELETE /messages/{message_id}: deletes one of the caller's messages, with
 * its copies and reactions. Administrators and the channel's
 * `can_delete_any_message_group` may delete any; the sender their own
 * (in a channel, if in its `can_delete_own_message_group`). One transaction
 * with the `delete_message` event to everyone who had it.
 */
export async function doDeleteMessage(
  db: Database,
  user: AuthedUser,
  messageId: number,
): Promise<void> {
  await db.transaction(async (tx) => {
    const message = await accessMessage(tx, user, messageId);
    const channel = message.channel;
    const any =
      isAdministrator(user.role) ||
      (channel !== null && (await inGroup(tx, channel.can_delete_any_message_group_id, user.id)));
    const own =
      message.sender_id === user.id &&
      (channel === null || (await inGroup(tx, channel.can_delete_own_message_group_id, user.id)));
    if (!any && !own) throw new JsonableError("You don't have permission to delete this message");
    const audience = await holders(tx, [message.id]);
    await tx.prisma.message.delete({ where: { id: message.id } });
    await sendEvent(tx, audience, {
      type: "delete_message",
      message_ids: [message.id],
      ...(channel === null
        ? { message_type: "private" }
        : { message_type: "stream", stream_id: channel.id, topic: message.topic }),
    });
  });
}

/** What PATCH /messages/{message_id} asks to change. */
export interface MessageEdit {
  content: string | undefined;
  topic: string | undefined;
  propagateMode: PropagateMode;
}

/** The messages a topic change moves: this one, or with those after it, or the whole topic. */
async function movedMessages(
  tx: Tx,
  message: Message & { channel: Channel },
  mode: PropagateMode,
): Promise<number[]> {
  if (mode === "change_one") return [message.id];
  const rows = await tx.prisma.message.findMany({
    where: {
      channel_id: message.channel.id,
      topic: { equals: message.topic, mode: "insensitive" },
      ...(mode === "change_later" ? { id: { gte: message.id } } : {}),
    },
    select: { id: true },
    orderBy: { id: "asc" },
    take: MAX_MOVED_MESSAGES + 1,
  });
  if (rows.length > MAX_MOVED_MESSAGES)
    throw new JsonableError(
      `Too many messages to move at once (limit: ${MAX_MOVED_MESSAGES}); move fewer with change_one or change_later.`,
    );
  return rows.map((r) => r.id);
}

/**
 * PATCH /messages/{message_id}: edits the content of one's own message
 * (within 600 s of sending; administrators too) and renames a channel
 * message's topic for one message, the later ones or the whole topic
 * (the sender within a week, moderators and administrators any time). One
 * transaction with the `update_message` event to everyone who has the
 * messages.
 */
export async function doEditMessage(
  db: Database,
  user: AuthedUser,
  messageId: number,
  edit: MessageEdit,
): Promise<void> {
  if (edit.content === undefined && edit.topic === undefined)
    throw new JsonableError("Nothing to change");
  const content = edit.content === undefined ? undefined : checkContent(edit.content);
  const topic = edit.topic === undefined ? undefined : checkTopic(edit.topic);
  await db.transaction(async (tx) => {
    const message = await accessMessage(tx, user, messageId);
    if (content === undefined && (topic === undefined || topic === message.topic))
      throw new JsonableError("Nothing to change");
    const age = (Date.now() - message.date_sent.getTime()) / 1000;
    const sender = message.sender_id === user.id;
    if (content !== undefined) {
      if (!sender) throw new JsonableError("You don't have permission to edit this message");
      if (age > MESSAGE_CONTENT_EDIT_LIMIT_SECONDS && !isAdministrator(user.role))
        throw new JsonableError("The time limit for editing this message has past");
    }
    if (topic !== undefined) {
      if (message.channel === null) throw new JsonableError("Direct messages cannot have topics.");
      const moderator = user.role <= Role.MODERATOR;
      if (!sender && !moderator)
        throw new JsonableError("You don't have permission to edit this message");
      if (!moderator && age > MESSAGE_TOPIC_EDIT_LIMIT_SECONDS)
        throw new JsonableError("The time limit for editing this message's topic has passed.");
    }
    const now = new Date();
    const moved =
      topic !== undefined && message.channel !== null && topic !== message.topic
        ? await movedMessages(tx, { ...message, channel: message.channel }, edit.propagateMode)
        : [];
    const ids = moved.length > 0 ? moved : [message.id];
    // A message's history is bounded like every per-user resource.
    if ((await longestEditHistory(tx, ids)) >= MAX_EDITS_PER_MESSAGE)
      throw new JsonableError(
        `This message has been edited too many times (limit: ${MAX_EDITS_PER_MESSAGE}).`,
      );
    if (content !== undefined)
      await tx.prisma.message.update({
        where: { id: message.id },
        data: { content, rendered_content: renderPlainText(content), last_edit_time: now },
      });
    if (content !== undefined) await linkMessageFiles(tx, user, message.id, content, true);
    if (moved.length > 0)
      await tx.prisma.message.updateMany({
        where: { id: { in: moved } },
        data: { topic, last_edit_time: now },
      });
    const timestamp = Math.floor(now.getTime() / 1000);
    const entry = { user_id: user.id, timestamp };
    const movedOthers = content === undefined ? moved : moved.filter((id) => id !== message.id);
    await appendEditHistory(tx, movedOthers, { ...entry, prev_topic: message.topic });
    if (content !== undefined)
      await appendEditHistory(tx, [message.id], {
        ...entry,
        prev_content: message.content,
        prev_rendered_content: message.rendered_content,
        ...(moved.includes(message.id) ? { prev_topic: message.topic } : {}),
      });
    await sendEvent(tx, await holders(tx, ids), {
      type: "update_message",
      user_id: user.id,
      edit_timestamp: timestamp,
      message_id: message.id,
      message_ids: ids,
      rendering_only: false,
      ...(content === undefined
        ? {}
        : {
            orig_content: message.content,
            orig_rendered_content: message.rendered_content,
            content,
            rendered_content: renderPlainText(content),
            is_me_message: false,
          }),
      ...(moved.length === 0 || message.channel === null
        ? {}
        : {
            stream_id: message.channel.id,
            stream_name: message.channel.name,
            orig_subject: message.topic,
            subject: topic,
            topic_links: [],
            propagate_mode: edit.propagateMode,
          }),
    });
  });
}

/**
 * GET /messages/{message_id}/history: the versions of one of the caller's
 * messages, oldest first: the original as sent, then each edit with what it
 * changed (`prev_content`, `prev_rendered_content`, `prev_topic`).
 */
export async function messageHistory(db: Database, user: AuthedUser, messageId: number) {
  const message = await accessMessage(db, user, messageId);
  const edits = (message.edit_history ?? []) as unknown as EditEntry[];
  let current = {
    topic: message.topic,
    content: message.content,
    rendered_content: message.rendered_content,
  };
  const versions = [];
  for (const edit of [...edits].reverse()) {
    versions.push({
      ...current,
      user_id: edit.user_id,
      timestamp: edit.timestamp,
      ...(edit.prev_topic === undefined ? {} : { prev_topic: edit.prev_topic }),
      ...(edit.prev_content === undefined
        ? {}
        : {
            prev_content: edit.prev_content,
            prev_rendered_content: edit.prev_rendered_content ?? "",
          }),
    });
    current = {
      topic: edit.prev_topic ?? current.topic,
      content: edit.prev_content ?? current.content,
      rendered_content: edit.prev_rendered_content ?? current.rendered_content,
    };
  }
  versions.push({
    ...current,
    user_id: message.sender_id,
    timestamp: Math.floor(message.date_sent.getTime() / 1000),
  });
  return { message_history: versions.reverse() };
}

/**
 * GET /messages/{message_id}/read_receipts: who has read one of the
 * caller's messages, by id: not its sender, not deactivated users, not those
 * whose `send_read_receipts` is off.
 */
export async function readReceipts(db: Database, user: AuthedUser, messageId: number) {
  const message = await accessMessage(db, user, messageId);
  const rows = await db.prisma.userMessage.findMany({
    where: {
      message_id: message.id,
      user_id: { not: message.sender_id },
      user: { is_active: true },
    },
    select: { flags: true, user: { select: { id: true, settings: true } } },
    orderBy: { user_id: "asc" },
  });
  return {
    user_ids: rows
      .filter((r) => (r.flags & MESSAGE_FLAGS.read) !== 0n)
      .filter(
        (r) => (r.user.settings as { send_read_receipts?: unknown }).send_read_receipts !== false,
      )
      .map((r) => r.user.id),
  };
}
