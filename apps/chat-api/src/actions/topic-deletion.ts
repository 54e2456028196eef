import type { Database } from "../db/database";
import { deleteMessages, newestTopicMessagesForUpdate } from "../db/queries/message-edits";
import { activeHolders } from "../db/queries/user-messages";
import { sendEvent } from "../realtime/queue";
import type { AuthedUser } from "../caches/auth";
import { checkTopic } from "./message-checks";
import { EMPTY_TOPIC_DISPLAY_NAME, accessChannelById } from "./channels";

/** Messages one batch of {@link doDeleteTopic} deletes: one short transaction each. */
export const TOPIC_DELETION_BATCH = 200;

/**
 * POST /streams/{stream_id}/delete_topic (administrators): deletes a
 * topic's messages (any case) in batches, newest first, each its own
 * transaction with its `delete_message` event to those who had them; where
 * history is not public to subscribers, only the messages the caller holds.
 * Stops after `budgetMs` with `complete: false` (the client asks again).
 */
export async function doDeleteTopic(
  db: Database,
  user: AuthedUser,
  channelId: number,
  topicName: string,
  budgetMs: number,
): Promise<{ complete: boolean }> {
  const channel = await accessChannelById(db, user, channelId);
  // The empty topic's display name means the empty topic (feature level 334).
  const topic = topicName === EMPTY_TOPIC_DISPLAY_NAME ? "" : checkTopic(topicName);
  const heldBy = channel.history_public_to_subscribers ? undefined : user.id;
  const deadline = Date.now() + budgetMs;
  for (;;) {
    if (Date.now() >= deadline) return { complete: false };
    const deleted = await db.transaction(async (tx) => {
      const ids = await newestTopicMessagesForUpdate(
        tx,
        channel.id,
        topic,
        heldBy,
        TOPIC_DELETION_BATCH,
      );
      if (ids.length === 0) return 0;
      const audience = (await activeHolders(tx, ids)).map((h) => h.user_id);
      await deleteMessages(tx, ids);
      await sendEvent(tx, audience, {
        type: "delete_message",
        message_ids: ids.sort((a, b) => a - b),
        message_type: "stream",
        stream_id: channel.id,
        topic,
      });
      return ids.length;
    });
    if (deleted === 0) return { complete: true };
  }
}
