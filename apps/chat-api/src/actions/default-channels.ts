import { JsonableError } from "@repo/envelope";
import type { Database } from "../db/database";
import { defaultChannelIds, updateChannel } from "../db/queries/channels";
import { activeUserIds } from "../db/queries/users";
import type { AuthedUser } from "../caches/auth";
import { sendEvent } from "../realtime/queue";
import { accessChannelById } from "./channels";

/**
 * POST and DELETE /default_streams (administrators): a channel of the realm
 * becomes, or stops being, one new users are subscribed to; the realm hears
 * the whole new list (`default_streams`, ids since feature level 330), in one
 * transaction. Adding a default or removing a non-default one changes nothing
 * and sends nothing, as in Zulip.
 */
export async function doSetDefaultChannel(
  db: Database,
  admin: AuthedUser,
  channelId: number,
  isDefault: boolean,
): Promise<void> {
  const channel = await accessChannelById(db, admin, channelId);
  if (channel.is_archived) throw new JsonableError("Invalid channel ID");
  if (isDefault && channel.invite_only)
    throw new JsonableError("Private channels cannot be made default.");
  if (channel.is_default_stream === isDefault) return;
  await db.transaction(async (tx) => {
    await updateChannel(tx, channel.id, { is_default_stream: isDefault });
    await sendEvent(tx, await activeUserIds(tx, admin.realm_id), {
      type: "default_streams",
      default_streams: await defaultChannelIds(tx, admin.realm_id),
    });
  });
}
