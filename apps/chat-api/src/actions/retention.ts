import type { Database } from "../db/database";
import { deleteMessages, expiredMessageIds } from "../db/queries/message-edits";

/** Most messages one sweep deletes (the next sweep takes the rest). */
export const RETENTION_BATCH = 1000;

/**
 * Deletes the channel messages older than their channel's retention
 * (`message_retention_days`: days; null follows the realm's, unlimited when
 * null; -1 is unlimited), at most {@link RETENTION_BATCH}, with their copies,
 * reactions and file links (cascades). As with Zulip's retention, clients
 * are not told: the messages are simply gone. Returns how many were deleted.
 */
export async function deleteExpiredMessages(db: Database, now: Date): Promise<number> {
  return db.transaction(async (tx) => {
    const ids = await expiredMessageIds(tx, now, RETENTION_BATCH);
    if (ids.length === 0) return 0;
    return deleteMessages(tx, ids);
  });
}
