import type { Database } from "../db/database";
import { recentDirectConversations, unreadMessages } from "../db/queries/unreads";
import { MENTION_FLAGS, MESSAGE_FLAGS } from "../lib/message-flag-bits";

/** Most unread messages `unread_msgs` lists (Zulip's `MAX_UNREAD_MESSAGES`); past it, `old_unreads_missing`. */
export const MAX_UNREAD_MESSAGES = 50_000;

/** Most conversations `recent_private_conversations` lists (Zulip's). */
const MAX_RECENT_CONVERSATIONS = 1000;

/**
 * `unread_msgs`: the user's unread messages grouped as Zulip groups them
 * (one-to-one conversations by the other person, group conversations by
 * their members, channel messages by channel and topic), the mentions among
 * them, and whether older ones were left out past the cap.
 */
export async function unreadState(
  db: Database,
  userId: number,
  topicName: (topic: string) => string,
) {
  const rows = await unreadMessages(db, userId, MESSAGE_FLAGS.read, MAX_UNREAD_MESSAGES + 1);
  const missing = rows.length > MAX_UNREAD_MESSAGES;
  const kept = rows.slice(0, MAX_UNREAD_MESSAGES).reverse();
  const groups = new Map<string, number[]>();
  const add = (key: string, id: number) => {
    const ids = groups.get(key);
    if (ids === undefined) groups.set(key, [id]);
    else ids.push(id);
  };
  const pms: { other_user_id: number; sender_id: number; unread_message_ids: number[] }[] = [];
  const huddles: { user_ids_string: string; unread_message_ids: number[] }[] = [];
  const streams: { stream_id: number; topic: string; unread_message_ids: number[] }[] = [];
  for (const row of kept) {
    if (row.channel_id !== null)
      add(`s\u0000${row.channel_id}\u0000${row.topic.toLowerCase()}`, row.id);
    else if (row.dm_key !== null) {
      const members = row.dm_key.split(",").map(Number);
      if (members.length <= 2) {
        const other = members.find((id) => id !== userId) ?? userId;
        add(`p\u0000${other}`, row.id);
      } else add(`h\u0000${row.dm_key}`, row.id);
    }
  }
  const byId = new Map(kept.map((row) => [row.id, row]));
  for (const [key, ids] of groups) {
    const [kind, first] = key.split("\u0000");
    const sample = byId.get(ids[0] ?? -1);
    if (sample === undefined) continue;
    if (kind === "s" && sample.channel_id !== null)
      streams.push({
        stream_id: sample.channel_id,
        topic: topicName(sample.topic),
        unread_message_ids: ids,
      });
    else if (kind === "p")
      pms.push({ other_user_id: Number(first), sender_id: Number(first), unread_message_ids: ids });
    else if (kind === "h" && sample.dm_key !== null)
      huddles.push({ user_ids_string: sample.dm_key, unread_message_ids: ids });
  }
  return {
    pms,
    streams,
    huddles,
    mentions: kept.filter((row) => (row.flags & MENTION_FLAGS) !== 0n).map((row) => row.id),
    count: kept.length,
    old_unreads_missing: missing,
  };
}

/** `recent_private_conversations`: the user's newest conversations, with the others in each. */
export async function recentConversations(db: Database, userId: number) {
  const conversations = await recentDirectConversations(db, userId, MAX_RECENT_CONVERSATIONS);
  return conversations.map((c) => ({
    max_message_id: c.max_message_id,
    user_ids: c.dm_key
      .split(",")
      .map(Number)
      .filter((id) => id !== userId),
  }));
}
