import type { Database } from "../db/database";
import type { EditEntry } from "../db/queries/message-edits";
import { activeHolders } from "../db/queries/user-messages";
import type { AuthedUser } from "../caches/auth";
import { MESSAGE_FLAGS } from "../lib/message-flag-bits";
import { accessMessage } from "./message-edit";

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
      ...(edit.prev_stream === undefined || edit.stream === undefined
        ? {}
        : { prev_stream: edit.prev_stream, stream: edit.stream }),
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
  const rows = await activeHolders(db, [message.id], message.sender_id);
  return {
    user_ids: rows
      .filter((r) => (r.flags & MESSAGE_FLAGS.read) !== 0n)
      .filter((r) => (r.settings as { send_read_receipts?: unknown }).send_read_receipts !== false)
      .map((r) => r.user_id),
  };
}
