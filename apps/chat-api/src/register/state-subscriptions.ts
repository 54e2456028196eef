import { formerSubscriptionsOf, subscribersByChannel } from "../db/queries/subscriptions";
import type { Database } from "../db/database";
import {
  type SubscriptionView,
  channelViews,
  listSubscriptions,
  subscriptionViews,
} from "../actions/channel-view";
import { listChannels } from "../actions/channels";
import type { AuthedUser } from "../caches/auth";
import { isAdministrator } from "../lib/roles";
import { type StoredUserSettings, userSettings } from "../lib/user-settings";

/**
 * The `subscription` state: the user's subscriptions, the channels they left
 * (`unsubscribed`) and the channels they may see but never joined
 * (`never_subscribed`), with subscribers when asked for.
 */
export async function subscriptionState(
  db: Database,
  user: AuthedUser,
  stored: StoredUserSettings,
  request: { includeSubscribers: boolean; notificationSettingsNull: boolean },
) {
  const defaults = userSettings(stored);
  /** Without notification_settings_null, a setting that follows the defaults is spelled out. */
  const spelled = <S extends SubscriptionView>(sub: S): S =>
    request.notificationSettingsNull
      ? sub
      : {
          ...sub,
          desktop_notifications:
            sub.desktop_notifications ?? defaults.enable_stream_desktop_notifications,
          email_notifications:
            sub.email_notifications ?? defaults.enable_stream_email_notifications,
          wildcard_mentions_notify:
            sub.wildcard_mentions_notify ?? defaults.wildcard_mentions_notify,
          push_notifications: sub.push_notifications ?? defaults.enable_stream_push_notifications,
          audible_notifications:
            sub.audible_notifications ?? defaults.enable_stream_audible_notifications,
        };
  const subscribed = await listSubscriptions(db, user.id, request.includeSubscribers);
  const left = await formerSubscriptionsOf(db, user.id);
  const unsubscribed = await subscriptionViews(db, left, request.includeSubscribers);
  const visible = await listChannels(db, user, {
    includePublic: true,
    includeWebPublic: true,
    includeSubscribed: false,
    excludeArchived: true,
    includeAll: isAdministrator(user.role),
    includeDefault: false,
    includeOwnerSubscribed: false,
    includeCanAccessContent: false,
  });
  const known = new Set([...subscribed, ...unsubscribed].map((s) => s.stream_id));
  const never = await channelViews(
    db,
    visible.filter((c) => !known.has(c.id)),
  );
  const subscribers = request.includeSubscribers
    ? await subscribersByChannel(
        db,
        never.map((c) => c.stream_id),
      )
    : new Map<number, number[]>();
  return {
    subscriptions: subscribed.map(spelled),
    unsubscribed: unsubscribed.map(spelled),
    never_subscribed: never.map((c) =>
      request.includeSubscribers
        ? {
            ...c,
            subscribers: subscribers.get(c.stream_id) ?? [],
          }
        : c,
    ),
  };
}
