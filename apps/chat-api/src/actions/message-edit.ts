import { setContentFlags } from "../db/queries/messages";
import {
  appendEditHistory,
  deleteMessage,
  type EditEntry,
  heldMessageWithChannel,
  longestEditHistory,
  moveMessages,
  moveRecipients,
  setMessageContent,
  topicMessageIds,
} from "../db/queries/message-edits";
import { createHash } from "node:crypto";
import type { Tx } from "../db/kysely";
import type { Database } from "../db/database";
import { ErrorCode, JsonableError } from "@repo/envelope";
import type { Channel, Message, Realm } from "../gen/prisma/client";
import { sendEvent, sendEvents } from "../realtime/queue";
import { activeHolders } from "../db/queries/user-messages";
import { widgetState } from "../db/queries/submessages";
import type { AuthedUser } from "../caches/auth";
import { CONTENT_FLAGS, MESSAGE_FLAGS, usersByFlags } from "../lib/message-flag-bits";
import { Role, isAdministrator, isGuest } from "../lib/roles";
import { checkContent, checkTopic } from "./message-checks";
import { channelToPostTo, checkTopicPolicy } from "./channel-posting";
import { type Move, type PropagateMode, sendMoveNotices } from "./move-notices";
import { contentFlags, renderAhead } from "./render-context";
import { linkMessageFiles } from "./uploads";
import { isGroupMember } from "./user-groups";

/** Most edits one message keeps in its history; past them it cannot be edited. */
export const MAX_EDITS_PER_MESSAGE = 1000;

/**
 * Largest edit history of one message, in bytes (the contents its edits
 * replaced): GET /messages/{id}/history answers at most about twice this.
 */
export const MAX_EDIT_HISTORY_BYTES = 2 * 1024 * 1024;

/**
 * Most messages one topic change moves: each statement that follows names
 * them all, well within PostgreSQL's 65,535 parameters.
 */
export const MAX_MOVED_MESSAGES = 5000;

/** The caller's message `messageId` with its channel, and who has it; `Invalid message(s)` else. */
export async function accessMessage(tx: Tx, user: AuthedUser, messageId: number) {
  const message = await heldMessageWithChannel(tx, user.id, messageId);
  if (message === null) throw new JsonableError("Invalid message(s)");
  return message;
}

/** Everyone who has one of the messages `ids` (their recipients, active). */
async function holders(tx: Tx, ids: readonly number[]): Promise<number[]> {
  return (await activeHolders(tx, ids)).map((r) => r.user_id);
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
  /** The realm's deletion limit (PATCH /realm), from the realms cache. */
  settings: Pick<Realm, "message_content_delete_limit_seconds">,
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
    const limit = settings.message_content_delete_limit_seconds;
    if (!any && limit !== null && Date.now() - message.date_sent.getTime() > limit * 1000)
      throw new JsonableError("The time limit for deleting this message has passed");
    const audience = await holders(tx, [message.id]);
    await deleteMessage(tx, message.id);
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
  /** SHA-256 (hex) of the content the client started from: the edit is refused if it changed. */
  prevContentSha256?: string | undefined;
  topic: string | undefined;
  /** Another channel to move the message (and those `propagateMode` takes along) to. */
  channelId: number | undefined;
  propagateMode: PropagateMode;
  /** Whether the notification bot tells the old and the new topic of a move. */
  notifyOldThread: boolean;
  notifyNewThread: boolean;
  /** The realm's URL, for the link to a moved message in a notice. */
  realmUrl: string;
  /** The realm's editing settings (PATCH /realm; null limits are none), from the realms cache. */
  settings: EditSettings;
}

/** The realm settings an edit or a move is checked against. */
export type EditSettings = Pick<
  Realm,
  | "allow_message_editing"
  | "message_content_edit_limit_seconds"
  | "move_messages_within_stream_limit_seconds"
  | "move_messages_between_streams_limit_seconds"
>;

/** The messages a move takes: this one, or with those after it, or the whole topic. */
async function movedMessages(
  tx: Tx,
  message: Message & { channel: Channel },
  mode: PropagateMode,
): Promise<number[]> {
  if (mode === "change_one") return [message.id];
  const ids = await topicMessageIds(
    tx,
    message.channel.id,
    message.topic,
    mode === "change_later" ? message.id : undefined,
    MAX_MOVED_MESSAGES + 1,
  );
  if (ids.length > MAX_MOVED_MESSAGES)
    throw new JsonableError(
      `Too many messages to move at once (limit: ${MAX_MOVED_MESSAGES}); move fewer with change_one or change_later.`,
    );
  return ids;
}

/**
 * PATCH /messages/{message_id}: edits the content of one's own message
 * (when the realm allows editing, within its
 * `message_content_edit_limit_seconds`, 600 s by default; administrators any
 * time); moves a channel message to another topic, another channel, or both,
 * alone or with the later messages of its topic or the whole topic (topics:
 * the sender within the realm's `move_messages_within_stream_limit_seconds`,
 * a week by default, moderators any time; channels: members and the old
 * channel's `can_move_messages_out_of_channel_group`, within
 * `move_messages_between_streams_limit_seconds` unless moderators, into a
 * channel they may post to). A move to another channel
 * gives the messages the new channel's recipients: who is not subscribed
 * there loses them (a `delete_message` event), its subscribers gain them,
 * read. The notification bot tells the topics, as Zulip's does. One
 * transaction with the `update_message` event to everyone who has the
 * messages.
 */
export async function doEditMessage(
  db: Database,
  user: AuthedUser,
  messageId: number,
  edit: MessageEdit,
): Promise<void> {
  if (edit.content === undefined && edit.topic === undefined && edit.channelId === undefined)
    throw new JsonableError("Nothing to change");
  if (edit.content !== undefined && edit.channelId !== undefined)
    throw new JsonableError("Cannot change message content while changing channel");
  const content = edit.content === undefined ? undefined : checkContent(edit.content);
  const topic = edit.topic === undefined ? undefined : checkTopic(edit.topic);
  // The new content is rendered before the transaction: no transaction waits on a render.
  const renderedAhead =
    content === undefined ? undefined : await renderAhead(db, user, content, user.id);
  await db.transaction(async (tx) => {
    const message = await accessMessage(tx, user, messageId);
    if (content !== undefined && (await widgetState(tx, message.id)).count > 0)
      throw new JsonableError("Widgets cannot be edited.");
    if (
      edit.prevContentSha256 !== undefined &&
      edit.prevContentSha256.toLowerCase() !==
        createHash("sha256").update(message.content).digest("hex")
    )
      throw new JsonableError(
        "'prev_content_sha256' value does not match the expected value.",
        ErrorCode.EXPECTATION_MISMATCH,
      );
    if ((topic !== undefined || edit.channelId !== undefined) && message.channel === null)
      throw new JsonableError(
        edit.channelId === undefined
          ? "Direct messages cannot have topics."
          : "Direct messages cannot be moved to channels.",
      );
    const source = message.channel;
    const target =
      source === null || edit.channelId === undefined || edit.channelId === source.id
        ? source
        : await channelToPostTo(tx, user, edit.channelId, null);
    const channelMoved = source !== null && target !== null && target.id !== source.id;
    const topicMoved = topic !== undefined && topic !== message.topic;
    if (content === undefined && !topicMoved && !channelMoved)
      throw new JsonableError("Nothing to change");
    const age = (Date.now() - message.date_sent.getTime()) / 1000;
    const sender = message.sender_id === user.id;
    const moderator = user.role <= Role.MODERATOR;
    const limits = edit.settings;
    const past = (limit: number | null) => limit !== null && age > limit;
    if (content !== undefined) {
      if (!limits.allow_message_editing)
        throw new JsonableError("Your organization has turned off message editing");
      if (!sender) throw new JsonableError("You don't have permission to edit this message");
      if (past(limits.message_content_edit_limit_seconds) && !isAdministrator(user.role))
        throw new JsonableError("The time limit for editing this message has past");
    }
    if (topicMoved) {
      if (!sender && !moderator)
        throw new JsonableError("You don't have permission to edit this message");
      if (!moderator && past(limits.move_messages_within_stream_limit_seconds))
        throw new JsonableError("The time limit for editing this message's topic has passed.");
    }
    if (channelMoved) {
      const mayMove =
        !isGuest(user.role) ||
        (await inGroup(tx, source.can_move_messages_out_of_channel_group_id, user.id));
      if (!mayMove) throw new JsonableError("You don't have permission to move this message");
      if (!moderator && past(limits.move_messages_between_streams_limit_seconds))
        throw new JsonableError("The time limit for editing this message's channel has passed");
    }
    const move: Move | undefined =
      source !== null && target !== null && (topicMoved || channelMoved)
        ? {
            from: { channel: source, topic: message.topic },
            to: { channel: target, topic: topic ?? message.topic },
            ids: await movedMessages(tx, { ...message, channel: source }, edit.propagateMode),
            mode: edit.propagateMode,
          }
        : undefined;
    if (move !== undefined) checkTopicPolicy(move.to.channel, move.to.topic);
    const ids = move?.ids ?? [message.id];
    // A message's history is bounded like every per-user resource.
    const history = await longestEditHistory(tx, ids);
    if (history.edits >= MAX_EDITS_PER_MESSAGE)
      throw new JsonableError(
        `This message has been edited too many times (limit: ${MAX_EDITS_PER_MESSAGE}).`,
      );
    // An edit of the content keeps the content it replaces: in bytes too, the history is bounded.
    const replaced =
      content === undefined
        ? 0
        : Buffer.byteLength(message.content) + Buffer.byteLength(message.rendered_content);
    if (history.bytes + replaced > MAX_EDIT_HISTORY_BYTES)
      throw new JsonableError(
        `This message's edit history is full (limit: ${String(MAX_EDIT_HISTORY_BYTES / 1024 / 1024)} MiB); send a new message instead.`,
      );
    const now = new Date();
    const rendered = renderedAhead?.();
    if (content !== undefined && rendered !== undefined) {
      await setMessageContent(tx, message.id, content, rendered.html, now);
      await linkMessageFiles(tx, user, message.id, content, true);
      // Mentions and alert words follow the new content.
      const holderIds = await holders(tx, [message.id]);
      const bits = await contentFlags(tx, rendered, content, holderIds, {
        senderId: message.sender_id,
        channelId: message.channel_id,
        topic: message.topic,
      });
      await setContentFlags(tx, message.id, bits, CONTENT_FLAGS);
    }
    if (move !== undefined)
      await moveMessages(
        tx,
        move.ids,
        { channelId: move.to.channel.id, topic: move.to.topic },
        now,
      );
    const timestamp = Math.floor(now.getTime() / 1000);
    const moved: Partial<EditEntry> =
      move === undefined
        ? {}
        : {
            ...(topicMoved ? { prev_topic: move.from.topic, topic: move.to.topic } : {}),
            ...(channelMoved
              ? { prev_stream: move.from.channel.id, stream: move.to.channel.id }
              : {}),
          };
    const entry = { user_id: user.id, timestamp };
    const movedOthers =
      content === undefined
        ? (move?.ids ?? [])
        : (move?.ids ?? []).filter((id) => id !== message.id);
    await appendEditHistory(tx, movedOthers, { ...entry, ...moved });
    if (content !== undefined)
      await appendEditHistory(tx, [message.id], {
        ...entry,
        prev_content: message.content,
        prev_rendered_content: message.rendered_content,
        ...(move?.ids.includes(message.id) === true ? moved : {}),
      });
    if (move !== undefined && channelMoved) {
      const lost = await moveRecipients(tx, move.ids, move.to.channel.id, MESSAGE_FLAGS.read);
      await sendEvent(tx, lost, {
        type: "delete_message",
        message_ids: move.ids,
        message_type: "stream",
        stream_id: move.from.channel.id,
        topic: move.from.topic,
      });
    }
    // Each holder is told the flags they hold after the edit (Zulip's events
    // are per user): one event per distinct set of flags.
    const told = await activeHolders(tx, ids);
    const update = {
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
            rendered_content: rendered?.html ?? "",
            is_me_message: false,
          }),
      ...(move === undefined
        ? {}
        : {
            stream_id: move.from.channel.id,
            stream_name: move.from.channel.name,
            orig_subject: move.from.topic,
            ...(topicMoved ? { subject: move.to.topic, topic_links: [] } : {}),
            ...(channelMoved ? { new_stream_id: move.to.channel.id } : {}),
            propagate_mode: move.mode,
          }),
    } as const;
    await sendEvents(
      tx,
      usersByFlags(told.map((h) => ({ userId: h.user_id, flags: h.flags }))).map(
        ({ flags, userIds }) => ({ userIds, event: { ...update, flags } }),
      ),
    );
    if (move !== undefined) await sendMoveNotices(tx, user, move, edit, message.id);
  });
}
