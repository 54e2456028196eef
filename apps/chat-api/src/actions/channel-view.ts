import { channelMessageStats } from "../db/queries/channels";
import {
  liveSubscriptionsOf,
  subscriberCounts,
  subscribersByChannel,
} from "../db/queries/subscriptions";
import type { Tx } from "../db/kysely";
import type { Channel, Subscription } from "../gen/prisma/client";
import { systemGroupIds } from "./realm-creation";
import { type GroupSettingValue, readGroupSettings } from "./group-settings";
import { CHANNEL_GROUP_SETTINGS, type ChannelGroupSetting } from "./channel-settings";

/** Zulip's `stream_post_policy` numbers, derived from `can_send_message_group`. */
const POST_POLICY = {
  everyone: 1,
  administrators: 2,
  fullMembers: 3,
  moderators: 4,
} as const;

/** A channel as GET /streams and the events describe it (Zulip's stream dictionary, newest level). */
export type ChannelView = {
  stream_id: number;
  name: string;
  is_archived: boolean;
  description: string;
  rendered_description: string;
  date_created: number;
  creator_id: number | null;
  invite_only: boolean;
  is_web_public: boolean;
  stream_post_policy: number;
  message_retention_days: number | null;
  history_public_to_subscribers: boolean;
  first_message_id: number | null;
  folder_id: number | null;
  topics_policy: string;
  is_recently_active: boolean;
  is_announcement_only: boolean;
  stream_weekly_traffic: number | null;
  subscriber_count: number;
} & Record<ChannelGroupSetting, GroupSettingValue>;

/** A subscription as GET /users/me/subscriptions describes it: the channel and the caller's settings. */
export type SubscriptionView = ChannelView & {
  color: string;
  is_muted: boolean;
  in_home_view: boolean;
  pin_to_top: boolean;
  desktop_notifications: boolean | null;
  email_notifications: boolean | null;
  wildcard_mentions_notify: boolean | null;
  push_notifications: boolean | null;
  audible_notifications: boolean | null;
  subscribers?: number[];
};

/** How long a channel counts as recently active after its last message or its creation. */
const RECENT_ACTIVITY_MS = 180 * 24 * 3600 * 1000;

/**
 * The wire form of `channels` (all of one realm), in their order: a fixed
 * number of queries however many channels (first message, activity,
 * subscriber counts and group settings are each fetched for all at once).
 */
export async function channelViews(tx: Tx, channels: readonly Channel[]): Promise<ChannelView[]> {
  const first = channels[0];
  if (first === undefined) return [];
  const ids = channels.map((c) => c.id);
  const [messageStats, counts, settings, groups] = await Promise.all([
    channelMessageStats(tx, ids),
    subscriberCounts(tx, ids),
    readGroupSettings(
      tx,
      channels.flatMap((c) => CHANNEL_GROUP_SETTINGS.map((name) => c[`${name}_id`])),
    ),
    systemGroupIds(tx, first.realm_id),
  ]);
  const stats = new Map(messageStats.map((s) => [s.channel_id, s]));
  const now = Date.now();
  return channels.map((channel) => {
    const stat = stats.get(channel.id);
    const lastActivity = Math.max(
      channel.date_created.getTime(),
      stat?._max.date_sent?.getTime() ?? 0,
    );
    const postPolicy =
      channel.can_send_message_group_id === groups["role:administrators"]
        ? POST_POLICY.administrators
        : channel.can_send_message_group_id === groups["role:moderators"]
          ? POST_POLICY.moderators
          : channel.can_send_message_group_id === groups["role:fullmembers"]
            ? POST_POLICY.fullMembers
            : POST_POLICY.everyone;
    const groupSettings = Object.fromEntries(
      CHANNEL_GROUP_SETTINGS.map((name) => [
        name,
        settings.get(channel[`${name}_id`]) ?? channel[`${name}_id`],
      ]),
    ) as Record<ChannelGroupSetting, GroupSettingValue>;
    return {
      stream_id: channel.id,
      name: channel.name,
      is_archived: channel.is_archived,
      description: channel.description,
      rendered_description: channel.rendered_description,
      date_created: Math.floor(channel.date_created.getTime() / 1000),
      creator_id: channel.creator_id,
      invite_only: channel.invite_only,
      is_web_public: channel.is_web_public,
      stream_post_policy: postPolicy,
      message_retention_days: channel.message_retention_days,
      history_public_to_subscribers: channel.history_public_to_subscribers,
      first_message_id: stat?._min.id ?? null,
      folder_id: channel.folder_id,
      topics_policy: channel.topics_policy,
      is_recently_active: now - lastActivity < RECENT_ACTIVITY_MS,
      is_announcement_only: postPolicy === POST_POLICY.administrators,
      ...groupSettings,
      stream_weekly_traffic: null,
      subscriber_count: counts.get(channel.id) ?? 0,
    };
  });
}

/**
 * The wire form of a user's subscriptions: each channel's view with the
 * user's settings for it, and (when `subscribers` is given) its subscribers.
 */
export async function subscriptionViews(
  tx: Tx,
  subscriptions: readonly (Subscription & { channel: Channel })[],
  withSubscribers: boolean,
  /** The channels' subscribers when the caller has read them already. */
  known?: Map<number, number[]>,
): Promise<SubscriptionView[]> {
  const views = await channelViews(
    tx,
    subscriptions.map((s) => s.channel),
  );
  const members = withSubscribers
    ? (known ??
      (await subscribersByChannel(
        tx,
        subscriptions.map((s) => s.channel_id),
      )))
    : new Map<number, number[]>();
  return subscriptions.map((subscription, i) => {
    const view = views[i];
    if (view === undefined) throw new Error("channelViews lost a channel");
    return {
      ...view,
      color: subscription.color,
      is_muted: subscription.is_muted,
      in_home_view: !subscription.is_muted,
      pin_to_top: subscription.pin_to_top,
      desktop_notifications: subscription.desktop_notifications,
      email_notifications: subscription.email_notifications,
      wildcard_mentions_notify: subscription.wildcard_mentions_notify,
      push_notifications: subscription.push_notifications,
      audible_notifications: subscription.audible_notifications,
      ...(withSubscribers
        ? {
            subscribers: members.get(subscription.channel_id) ?? [],
          }
        : {}),
    };
  });
}

/** GET /users/me/subscriptions: the user's active subscriptions to channels not archived, by name. */
export async function listSubscriptions(
  tx: Tx,
  userId: number,
  withSubscribers: boolean,
): Promise<SubscriptionView[]> {
  return subscriptionViews(tx, await liveSubscriptionsOf(tx, userId), withSubscribers);
}
