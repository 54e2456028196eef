import { isLiveFolder } from "../db/queries/channel-folders";
import { channelViewerIds, updateChannel } from "../db/queries/channels";
import type { Database } from "../db/database";
import {
  ErrorCode,
  InsufficientPermissionError,
  JsonableError,
  OrganizationOwnerRequiredError,
} from "@repo/envelope";
import type { TopicsPolicy } from "../gen/prisma/client";
import { sendEvent } from "../realtime/queue";
import type { AuthedUser } from "../caches/auth";
import { type GroupSettingUpdate, changeGroupSetting } from "./group-settings";
import { renderAhead } from "./render-context";
import { Role, isAdministrator, isOwner } from "../lib/roles";
import { codePoints } from "../lib/text";
import {
  CHANNEL_GROUP_SETTINGS,
  type ChannelGroupSetting,
  MAX_CHANNEL_DESCRIPTION_LENGTH,
} from "./channel-settings";
import { accessChannelById, channelByName } from "./channels";
import { checkChannelName, parseRetentionDays } from "./channel-create";
import { isGroupMember } from "./user-groups";

/** What PATCH /streams/{stream_id} asks to change (undefined: unchanged). */
export interface ChannelUpdate {
  newName?: string | undefined;
  description?: string | undefined;
  isPrivate?: boolean | undefined;
  isWebPublic?: boolean | undefined;
  historyPublicToSubscribers?: boolean | undefined;
  isDefaultStream?: boolean | undefined;
  /** `realm_default`, `unlimited`, or a number of days, as sent (organization owners only). */
  messageRetentionDays?: string | undefined;
  /** A folder of the realm, or null for none. */
  folderId?: number | null | undefined;
  topicsPolicy?: TopicsPolicy | undefined;
  groups: Partial<Record<ChannelGroupSetting, GroupSettingUpdate>>;
}

/**
 * PATCH /streams/{stream_id}: changes a channel's name, description, privacy,
 * history, default status, folder, topics policy, message retention and
 * permission groups, by its administrators (the realm's, or the channel's
 * `can_administer_channel_group`; only realm administrators make it a
 * default channel or web-public, only owners change its retention, only
 * moderators its topics policy: the realm's `can_set_topics_policy_group`). One transaction,
 * with a `stream` `update` event per property to everyone who could see the
 * channel before or can after.
 */
export async function doUpdateChannel(
  db: Database,
  user: AuthedUser,
  channelId: number,
  update: ChannelUpdate,
  options: { webPublicStreamsEnabled: boolean },
): Promise<void> {
  const channel = await accessChannelById(db, user, channelId);
  if (update.newName !== undefined) checkChannelName(update.newName);
  if (
    update.description !== undefined &&
    codePoints(update.description) > MAX_CHANNEL_DESCRIPTION_LENGTH
  )
    throw new JsonableError(
      `description is too long (limit: ${MAX_CHANNEL_DESCRIPTION_LENGTH} characters)`,
    );
  if (update.messageRetentionDays !== undefined && !isOwner(user.role))
    throw new OrganizationOwnerRequiredError();
  const retention =
    update.messageRetentionDays === undefined
      ? undefined
      : parseRetentionDays(update.messageRetentionDays);
  if (update.topicsPolicy !== undefined && user.role > Role.MODERATOR)
    throw new InsufficientPermissionError();
  const description =
    update.description === undefined || update.description === channel.description
      ? undefined
      : await renderAhead(db, { realm_id: channel.realm_id }, update.description, user.id);
  await db.transaction(async (tx) => {
    const admin = isAdministrator(user.role);
    if (
      !admin &&
      !(await isGroupMember(tx, channel.can_administer_channel_group_id, user.id, false))
    )
      throw new InsufficientPermissionError();
    if ((update.isDefaultStream !== undefined || update.isWebPublic === true) && !admin)
      throw new InsufficientPermissionError();
    if (update.isWebPublic === true && !options.webPublicStreamsEnabled)
      throw new JsonableError("Web-public channels are not enabled.");
    const before = await channelViewerIds(tx, channel);
    const data: Record<string, unknown> = {};
    const changes: { property: string; value: unknown; extra?: Record<string, unknown> }[] = [];
    if (update.newName !== undefined && update.newName !== channel.name) {
      const clash = await channelByName(tx, channel.realm_id, update.newName);
      if (clash !== null && clash.id !== channel.id)
        throw new JsonableError(
          `Channel '${update.newName}' already exists`,
          ErrorCode.CHANNEL_ALREADY_EXISTS,
        );
      data.name = update.newName;
      changes.push({ property: "name", value: update.newName });
    }
    if (update.description !== undefined && description !== undefined) {
      const rendered = description().html;
      data.description = update.description;
      data.rendered_description = rendered;
      changes.push({
        property: "description",
        value: update.description,
        extra: { rendered_description: rendered },
      });
    }
    const inviteOnly = update.isPrivate ?? channel.invite_only;
    const webPublic = update.isWebPublic ?? (inviteOnly ? false : channel.is_web_public);
    const history = inviteOnly
      ? (update.historyPublicToSubscribers ?? channel.history_public_to_subscribers)
      : true;
    const isDefault = update.isDefaultStream ?? channel.is_default_stream;
    if (isDefault && inviteOnly) throw new JsonableError("A default channel cannot be private.");
    if (
      inviteOnly !== channel.invite_only ||
      webPublic !== channel.is_web_public ||
      history !== channel.history_public_to_subscribers
    ) {
      Object.assign(data, {
        invite_only: inviteOnly,
        is_web_public: webPublic,
        history_public_to_subscribers: history,
      });
      changes.push({
        property: "invite_only",
        value: inviteOnly,
        extra: { history_public_to_subscribers: history, is_web_public: webPublic },
      });
    }
    if (isDefault !== channel.is_default_stream) data.is_default_stream = isDefault;
    if (retention !== undefined && retention !== channel.message_retention_days) {
      data.message_retention_days = retention;
      changes.push({ property: "message_retention_days", value: retention });
    }
    if (update.folderId !== undefined && update.folderId !== channel.folder_id) {
      if (update.folderId !== null) {
        if (!(await isLiveFolder(tx, channel.realm_id, update.folderId)))
          throw new JsonableError("Invalid channel folder ID");
      }
      data.folder_id = update.folderId;
      changes.push({ property: "folder_id", value: update.folderId });
    }
    if (update.topicsPolicy !== undefined && update.topicsPolicy !== channel.topics_policy) {
      data.topics_policy = update.topicsPolicy;
      changes.push({ property: "topics_policy", value: update.topicsPolicy });
    }
    for (const name of CHANNEL_GROUP_SETTINGS) {
      const change = update.groups[name];
      if (change === undefined) continue;
      const column = `${name}_id` as const;
      const next = await changeGroupSetting(tx, channel.realm_id, channel[column], change);
      if (next === undefined) continue;
      data[column] = next;
      changes.push({ property: name, value: change.new });
    }
    if (Object.keys(data).length === 0) return;
    const updated = await updateChannel(tx, channel.id, data);
    const after = await channelViewerIds(tx, updated);
    const audience = [...new Set([...before, ...after])];
    for (const change of changes)
      await sendEvent(tx, audience, {
        type: "stream",
        op: "update",
        stream_id: channel.id,
        name: channel.name,
        property: change.property,
        value: change.value,
        ...change.extra,
      });
  });
}
