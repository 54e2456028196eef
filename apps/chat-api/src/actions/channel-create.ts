import { firstInactiveOrUnknown } from "../db/queries/users";
import { notificationBot } from "../db/queries/bots";
import { realmById } from "../db/queries/realms";
import { isLiveFolder } from "../db/queries/channel-folders";
import type { Tx } from "../db/kysely";
import { announceSubscriptions } from "./subscription-events";
import { channelById, channelViewerIds, insertChannel } from "../db/queries/channels";
import { activateSubscriptions } from "../db/queries/subscriptions";
import type { Database } from "../db/database";
import {
  ErrorCode,
  InsufficientPermissionError,
  JsonableError,
  OrganizationAdministratorRequiredError,
  OrganizationOwnerRequiredError,
} from "@repo/envelope";
import type { TopicsPolicy } from "../gen/prisma/client";
import { type RenderedAhead, renderAhead } from "./render-context";
import { channelByName } from "./channels";
import { defaultChannelGroups, systemGroupIds } from "./realm-creation";
import type { AuthedUser } from "../caches/auth";
import { isAdministrator, isGuest, isOwner } from "../lib/roles";
import { type GroupSettingValue, storeGroupSetting } from "./group-settings";
import { isGroupMember } from "./user-groups";
import { sendBotMessage } from "./message-send";
import {
  CHANNEL_GROUP_SETTINGS,
  type ChannelGroupSetting,
  MAX_CHANNEL_NAME_LENGTH,
} from "./channel-settings";
import { channelViews } from "./channel-view";
import { sendEvent } from "../realtime/queue";

/** What POST /channels/create asks for, parsed. */
export interface NewChannel {
  name: string;
  description: string;
  subscribers: readonly number[];
  announce: boolean;
  inviteOnly: boolean;
  isWebPublic: boolean;
  isDefaultStream: boolean;
  folderId: number | undefined;
  topicsPolicy: TopicsPolicy;
  historyPublicToSubscribers: boolean | undefined;
  /** Days; null = the realm's setting; -1 = unlimited. */
  messageRetentionDays: number | null;
  settings: Partial<Record<ChannelGroupSetting, GroupSettingValue>>;
}

/** Zulip's channel-name rules, with its messages. */
export function checkChannelName(name: string): void {
  if (name.trim() === "") throw new JsonableError("Channel name can't be empty.");
  // Code points, as Zulip (Python) counts characters.
  const chars = Array.from(name);
  if (chars.length > MAX_CHANNEL_NAME_LENGTH) {
    throw new JsonableError(
      `Channel name too long (limit: ${MAX_CHANNEL_NAME_LENGTH} characters).`,
    );
  }
  const bad = chars.findIndex((c) => /^[\p{Cc}\p{Cs}\p{Cn}]$/u.test(c));
  if (bad >= 0)
    throw new JsonableError(`Invalid character in channel name, at position ${bad + 1}.`);
}

/** `message_retention_days`: `realm_default` (null), `unlimited` (-1), or a positive number of days. */
export function parseRetentionDays(raw: string): number | null {
  const value = raw.trim().replace(/^"(.*)"$/, "$1");
  if (value === "realm_default") return null;
  if (value === "unlimited") return -1;
  if (/^[1-9]\d{0,8}$/.test(value)) return Number(value);
  throw new JsonableError(`Bad value for 'message_retention_days': ${raw}`);
}

async function member(tx: Tx, groupId: number | null, userId: number): Promise<boolean> {
  return groupId !== null && isGroupMember(tx, groupId, userId, false);
}

/** Settings whose rule needs content access to the channel (the spec's table). */
const CONTENT_ACCESS_SETTINGS: readonly ChannelGroupSetting[] = [
  "can_delete_any_message_group",
  "can_delete_own_message_group",
  "can_move_messages_out_of_channel_group",
  "can_move_messages_within_channel_group",
];

/**
 * Creates a channel in one transaction: see {@link createChannel}; its
 * description is rendered before. Returns the new id.
 */
export async function doCreateChannel(
  db: Database,
  user: AuthedUser,
  channel: NewChannel,
  options: { webPublicStreamsEnabled: boolean },
): Promise<number> {
  const description = await renderAhead(
    db,
    { realm_id: user.realm_id },
    channel.description,
    user.id,
  );
  return db.transaction((tx) => createChannel(tx, user, channel, description, options));
}

/**
 * Creates a channel inside transaction `tx`: who may create which kind, the
 * name and option rules, subscribers, group settings (ids or anonymous
 * groups) and the access a non-administrator needs to set them, and the
 * notification bot's announcement of a public channel. `description` is the
 * channel's description rendered before the transaction. Returns the new id.
 */
export async function createChannel(
  tx: Tx,
  user: AuthedUser,
  channel: NewChannel,
  description: RenderedAhead,
  options: { webPublicStreamsEnabled: boolean },
): Promise<number> {
  const realm = await realmById(tx, user.realm_id);
  if (isGuest(user.role)) throw new InsufficientPermissionError();
  const kind = channel.isWebPublic
    ? realm.can_create_web_public_channel_group_id
    : channel.inviteOnly
      ? realm.can_create_private_channel_group_id
      : realm.can_create_public_channel_group_id;
  const webPublicAllowed =
    !channel.isWebPublic || (options.webPublicStreamsEnabled && realm.enable_spectator_access);
  if (!webPublicAllowed || !(await member(tx, kind, user.id)))
    throw new InsufficientPermissionError();
  if (channel.isDefaultStream && channel.inviteOnly)
    throw new JsonableError("A default channel cannot be private.");
  if (channel.isDefaultStream && !isAdministrator(user.role))
    throw new OrganizationAdministratorRequiredError();
  if (channel.messageRetentionDays !== null && !isOwner(user.role))
    throw new OrganizationOwnerRequiredError();
  checkChannelName(channel.name);
  const history = channel.inviteOnly ? (channel.historyPublicToSubscribers ?? false) : true;

  {
    if ((await channelByName(tx, realm.id, channel.name)) !== null) {
      throw new JsonableError(
        `Channel '${channel.name}' already exists`,
        ErrorCode.CHANNEL_ALREADY_EXISTS,
      );
    }
    const subscribers = [...new Set(channel.subscribers)];
    if ((await firstInactiveOrUnknown(tx, realm.id, subscribers)) !== undefined)
      throw new JsonableError("No such user");
    if (channel.folderId !== undefined) {
      if (!(await isLiveFolder(tx, realm.id, channel.folderId)))
        throw new JsonableError("Invalid channel folder ID");
    }
    const groups = await systemGroupIds(tx, realm.id);
    const defaults = defaultChannelGroups(groups);
    const settings: Record<string, number> = {};
    for (const name of CHANNEL_GROUP_SETTINGS) {
      const given = channel.settings[name];
      settings[`${name}_id`] =
        given !== undefined
          ? await storeGroupSetting(tx, realm.id, given)
          : name === "can_administer_channel_group"
            ? await storeGroupSetting(tx, realm.id, {
                direct_members: [user.id],
                direct_subgroups: [],
              })
            : defaults[`${name}_id`];
    }
    if (
      channel.inviteOnly &&
      !history &&
      settings.can_create_topic_group_id !== groups["role:everyone"]
    ) {
      throw new JsonableError(
        "can_create_topic_group must be role:everyone for a private channel with protected history.",
      );
    }
    const given = CHANNEL_GROUP_SETTINGS.filter((name) => channel.settings[name] !== undefined);
    if (given.length > 0 && !isAdministrator(user.role)) {
      // Setting a permission needs permission to administer the new channel,
      // and content access for the settings about messages.
      const administers = await member(
        tx,
        settings.can_administer_channel_group_id ?? null,
        user.id,
      );
      const contentAccess = !channel.inviteOnly || subscribers.includes(user.id);
      if (
        !administers ||
        (!contentAccess && given.some((name) => CONTENT_ACCESS_SETTINGS.includes(name)))
      )
        throw new InsufficientPermissionError();
    }
    const created = await insertChannel(tx, {
      realm_id: realm.id,
      name: channel.name,
      description: channel.description,
      rendered_description: description().html,
      invite_only: channel.inviteOnly,
      is_web_public: channel.isWebPublic,
      history_public_to_subscribers: history,
      is_default_stream: channel.isDefaultStream,
      message_retention_days: channel.messageRetentionDays,
      topics_policy: channel.topicsPolicy,
      folder_id: channel.folderId ?? null,
      creator_id: user.id,
      ...(settings as Record<`${ChannelGroupSetting}_id`, number>),
    });
    // One statement whatever the number of subscribers.
    await activateSubscriptions(tx, created.id, subscribers);
    if (
      channel.announce &&
      !channel.inviteOnly &&
      realm.new_stream_announcements_stream_id !== null
    ) {
      await announce(tx, realm.id, realm.new_stream_announcements_stream_id, user, channel.name);
    }
    await sendEvent(tx, await channelViewerIds(tx, created), {
      type: "stream",
      op: "create",
      streams: await channelViews(tx, [created]),
    });
    await announceSubscriptions(tx, [{ channel: created, userIds: subscribers }]);
    return created.id;
  }
}

/** The notification bot's message in the announcements channel, delivered to its subscribers. */
async function announce(
  tx: Tx,
  realmId: number,
  channelId: number,
  creator: AuthedUser,
  name: string,
): Promise<void> {
  const bot = await notificationBot(tx, realmId);
  const channel = await channelById(tx, channelId);
  if (bot === null || channel === null) return;
  const content = `@_**${creator.full_name}|${creator.id}** created a new channel #**${name}**.`;
  await sendBotMessage(tx, bot, { kind: "channel", channel, topic: "new channels" }, content);
}
