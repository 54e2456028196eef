import type { Database } from "../db/database";
import type { Realm } from "../gen/prisma/client";
import {
  type SubscriptionView,
  channelViews,
  listSubscriptions,
  subscriptionViews,
} from "../actions/channel-view";
import { listChannelFolders } from "../actions/channel-folders";
import { EMPTY_TOPIC_DISPLAY_NAME } from "../actions/channel-lookups";
import { listChannels } from "../actions/channels";
import { listAlertWords } from "../actions/alert-words";
import { listDrafts } from "../actions/drafts";
import { realmStatuses } from "../actions/user-status";
import { lastPresenceUpdateId, legacyPresence, realmPresences } from "../actions/presence";
import { listLegacyFilters, listLinkifiers, listProfileFields } from "../actions/realm-config";
import { listReminders } from "../actions/reminders";
import { listSavedSnippets } from "../actions/saved-snippets";
import { hasRealmPermission } from "../actions/user-groups";
import { listUserGroups } from "../actions/user-groups";
import { gravatarUrl, listUsers } from "../actions/user-view";
import {
  messagesFlagged,
  newestMessageId,
  recentDirectConversations,
  unreadMessages,
} from "../db/queries/unreads";
import type { AuthedUser } from "../lib/auth";
import type { Config } from "../lib/config";
import { MENTION_FLAGS, MESSAGE_FLAGS } from "../lib/message-flags";
import { isAdministrator, isGuest, isOwner, Role } from "../lib/roles";
import { userSettings } from "../lib/user-settings";
import { realmState } from "./realm-state";

/** The client capabilities of `POST /register` that change the state's shape. */
export interface ClientCapabilities {
  /** Per-channel notification settings as null where they follow the user's defaults. */
  notificationSettingsNull: boolean;
  /** Topics named "" as they are (else as `realm_empty_topic_display_name`). */
  emptyTopicName: boolean;
  /** Deactivated user groups in `realm_user_groups`. */
  includeDeactivatedGroups: boolean;
}

/** What `POST /register` asks the initial state for. */
export interface StateRequest {
  /** The state types to fetch (`fetch_event_types`, else `event_types`); all when undefined. */
  wanted: readonly string[] | undefined;
  /** Presence keyed by user id instead of email. */
  slimPresence: boolean;
  presenceHistoryDays: number | undefined;
  /** CHAT_CAN_ACCESS_ALL_USERS_GROUP_LIMITS_PRESENCE. */
  limitPresenceToAccessible: boolean;
  clientGravatar: boolean;
  includeSubscribers: boolean;
  capabilities: ClientCapabilities;
}

/** Most unread messages `unread_msgs` lists (Zulip's `MAX_UNREAD_MESSAGES`); past it, `old_unreads_missing`. */
export const MAX_UNREAD_MESSAGES = 50_000;

/** Most conversations `recent_private_conversations` lists (Zulip's). */
const MAX_RECENT_CONVERSATIONS = 1000;

type State = Record<string, unknown>;

/**
 * The initial state of `POST /register` for each state type asked for
 * (Zulip's `fetch_initial_state_data`): read after the queue exists, so that
 * whatever changes later reaches the client as an event. Each part names the
 * event types that keep it current (docs/chat-api.md lists them).
 */
export async function fetchInitialState(
  db: Database,
  config: Config,
  realm: Realm,
  user: AuthedUser,
  request: StateRequest,
): Promise<State> {
  const { wanted, capabilities } = request;
  const wants = (type: string) => wanted === undefined || wanted.includes(type);
  const topicName = (topic: string) =>
    topic === "" && !capabilities.emptyTopicName ? EMPTY_TOPIC_DISPLAY_NAME : topic;
  const state: State = {};
  if (wants("alert_words")) state.alert_words = await listAlertWords(db, user.id);
  if (wants("channel_folders"))
    state.channel_folders = await listChannelFolders(db, realm.id, true);
  if (wants("custom_profile_fields")) {
    state.custom_profile_fields = await listProfileFields(db, realm.id);
  }
  if (wants("default_streams")) {
    const defaults = await db.prisma.channel.findMany({
      where: { realm_id: realm.id, is_default_stream: true, is_archived: false },
      select: { id: true },
      orderBy: { id: "asc" },
    });
    state.realm_default_streams = defaults.map((c) => c.id);
  }
  if (wants("default_stream_groups")) state.realm_default_stream_groups = [];
  if (wants("drafts")) {
    const row = await db.prisma.user.findUniqueOrThrow({ where: { id: user.id } });
    state.drafts = row.enable_drafts_synchronization ? await listDrafts(db, user.id) : [];
  }
  if (wants("message")) state.max_message_id = await newestMessageId(db, user.id);
  if (wants("message") && wants("update_message_flags"))
    state.unread_msgs = await unreadState(db, user.id, topicName);
  if (wants("muted_topics")) {
    const muted = await db.prisma.userTopic.findMany({
      where: { user_id: user.id, visibility_policy: 1 },
      include: { channel: { select: { name: true } } },
      orderBy: { id: "asc" },
    });
    state.muted_topics = muted.map((t) => [
      t.channel.name,
      topicName(t.topic_name),
      Math.floor(t.last_updated.getTime() / 1000),
    ]);
  }
  if (wants("muted_users")) state.muted_users = [];
  if (wants("navigation_views")) state.navigation_views = [];
  if (wants("onboarding_steps")) {
    state.onboarding_steps = [];
    state.navigation_tour_video_url = null;
  }
  if (wants("presence")) {
    const rows = await realmPresences(db, user, {
      limitToAccessible: request.limitPresenceToAccessible,
      ...(request.presenceHistoryDays === undefined
        ? {}
        : { historyDays: request.presenceHistoryDays }),
    });
    state.presences = Object.fromEntries(
      rows.map((p) => [request.slimPresence ? String(p.user_id) : p.email, legacyPresence(p)]),
    );
    state.server_timestamp = Date.now() / 1000;
    state.presence_last_update_id = await lastPresenceUpdateId(db, realm.id);
  }
  if (wants("realm")) Object.assign(state, await realmState(db, config, realm));
  if (wants("realm_bot")) state.realm_bots = await ownBots(db, user);
  if (wants("realm_emoji")) state.realm_emoji = {};
  if (wants("realm_filters")) state.realm_filters = await listLegacyFilters(db, realm.id);
  if (wants("realm_linkifiers")) state.realm_linkifiers = await listLinkifiers(db, realm.id);
  if (wants("realm_user")) Object.assign(state, await peopleState(db, realm, user, request));
  if (wants("realm_user_groups"))
    state.realm_user_groups = await listUserGroups(
      db,
      realm.id,
      capabilities.includeDeactivatedGroups,
    );
  if (wants("recent_private_conversations")) {
    const conversations = await recentDirectConversations(db, user.id, MAX_RECENT_CONVERSATIONS);
    state.recent_private_conversations = conversations.map((c) => ({
      max_message_id: c.max_message_id,
      user_ids: c.dm_key
        .split(",")
        .map(Number)
        .filter((id) => id !== user.id),
    }));
  }
  if (wants("reminders")) state.reminders = await listReminders(db, user.id);
  if (wants("saved_snippets")) state.saved_snippets = await listSavedSnippets(db, user.id);
  if (wants("scheduled_messages")) state.scheduled_messages = [];
  if (wants("starred_messages"))
    state.starred_messages = await messagesFlagged(db, user.id, MESSAGE_FLAGS.starred);
  if (wants("stream")) {
    const channels = await listChannels(db, user, {
      includePublic: true,
      includeWebPublic: true,
      includeSubscribed: true,
      excludeArchived: true,
      includeAll: false,
      includeDefault: false,
      includeOwnerSubscribed: false,
      includeCanAccessContent: false,
    });
    state.streams = await channelViews(db, channels);
  }
  if (wants("subscription")) Object.assign(state, await subscriptionState(db, user, request));
  if (wants("user_settings")) {
    const row = await db.prisma.user.findUniqueOrThrow({ where: { id: user.id } });
    state.user_settings = userSettings(row);
  }
  if (wants("user_status")) state.user_status = await realmStatuses(db, realm.id);
  if (wants("user_topic")) {
    const topics = await db.prisma.userTopic.findMany({
      where: { user_id: user.id },
      orderBy: { id: "asc" },
    });
    state.user_topics = topics.map((t) => ({
      stream_id: t.channel_id,
      topic_name: topicName(t.topic_name),
      last_updated: Math.floor(t.last_updated.getTime() / 1000),
      visibility_policy: t.visibility_policy,
    }));
  }
  if (wants("video_calls")) state.has_zoom_token = false;
  return state;
}

/**
 * `unread_msgs`: the user's unread messages grouped as Zulip groups them
 * (one-to-one conversations by the other person, group conversations by
 * their members, channel messages by channel and topic), the mentions among
 * them, and whether older ones were left out past the cap.
 */
async function unreadState(db: Database, userId: number, topicName: (topic: string) => string) {
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

/**
 * The `realm_user` state: the realm's people (`realm_users`, deactivated ones
 * in `realm_non_active_users`, system bots in `cross_realm_bots`) and what
 * the user may do, as Zulip's `realm_user` part of `register` gives it.
 */
async function peopleState(db: Database, realm: Realm, user: AuthedUser, request: StateRequest) {
  const people = await listUsers(db, realm.id, user, {
    clientGravatar: request.clientGravatar,
    customProfileFields: true,
  });
  const systemBots = new Set(
    (
      await db.prisma.user.findMany({
        where: { realm_id: realm.id, is_system_bot: true },
        select: { id: true },
      })
    ).map((b) => b.id),
  );
  const may = (setting: Parameters<typeof hasRealmPermission>[2]) =>
    hasRealmPermission(db, realm.id, setting, user.id);
  const [publicChannels, privateChannels, webPublicChannels, invite] = await Promise.all([
    may("can_create_public_channel_group_id"),
    may("can_create_private_channel_group_id"),
    may("can_create_web_public_channel_group_id"),
    may("can_invite_users_group_id"),
  ]);
  return {
    realm_users: people.filter((p) => p.is_active && !systemBots.has(p.user_id)),
    realm_non_active_users: people.filter((p) => !p.is_active && !systemBots.has(p.user_id)),
    cross_realm_bots: people
      .filter((p) => systemBots.has(p.user_id))
      .map((p) => ({ ...p, is_system_bot: true })),
    avatar_source: "G",
    avatar_url: gravatarUrl(user.delivery_email),
    avatar_url_medium: gravatarUrl(user.delivery_email),
    can_create_private_streams: privateChannels,
    can_create_public_streams: publicChannels,
    can_create_streams: privateChannels || publicChannels,
    can_create_web_public_streams: webPublicChannels,
    can_invite_others_to_realm: invite,
    delivery_email: user.delivery_email,
    email: user.email,
    full_name: user.full_name,
    is_admin: isAdministrator(user.role),
    is_billing_admin: false,
    is_guest: isGuest(user.role),
    is_moderator: user.role === Role.MODERATOR,
    is_owner: isOwner(user.role),
    user_id: user.id,
  };
}

/** `realm_bots`: the bots the user may administer (their own; every bot for administrators). */
async function ownBots(db: Database, user: AuthedUser) {
  const bots = await db.prisma.user.findMany({
    where: {
      realm_id: user.realm_id,
      is_bot: true,
      is_system_bot: false,
      ...(isAdministrator(user.role) ? {} : { bot_owner_id: user.id }),
    },
    include: { bot_owner: { select: { email: true } } },
    orderBy: { id: "asc" },
  });
  return bots.map((bot) => ({
    user_id: bot.id,
    full_name: bot.full_name,
    api_key: bot.api_key,
    avatar_url: gravatarUrl(bot.delivery_email),
    bot_type: bot.bot_type,
    default_all_public_streams: false,
    default_events_register_stream: null,
    default_sending_stream: null,
    email: bot.email,
    is_active: bot.is_active,
    owner_id: bot.bot_owner_id,
    services: [],
  }));
}

/**
 * The `subscription` state: the user's subscriptions, the channels they left
 * (`unsubscribed`) and the channels they may see but never joined
 * (`never_subscribed`), with subscribers when asked for.
 */
async function subscriptionState(db: Database, user: AuthedUser, request: StateRequest) {
  const defaults = userSettings(await db.prisma.user.findUniqueOrThrow({ where: { id: user.id } }));
  /** Without notification_settings_null, a setting that follows the defaults is spelled out. */
  const spelled = <S extends SubscriptionView>(sub: S): S =>
    request.capabilities.notificationSettingsNull
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
  const left = await db.prisma.subscription.findMany({
    where: { user_id: user.id, active: false, channel: { is_archived: false } },
    include: { channel: true },
    orderBy: { channel: { name: "asc" } },
  });
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
    ? await db.prisma.subscription.findMany({
        where: {
          channel_id: { in: never.map((c) => c.stream_id) },
          active: true,
          user: { is_active: true },
        },
        select: { channel_id: true, user_id: true },
        orderBy: { user_id: "asc" },
      })
    : [];
  return {
    subscriptions: subscribed.map(spelled),
    unsubscribed: unsubscribed.map(spelled),
    never_subscribed: never.map((c) =>
      request.includeSubscribers
        ? {
            ...c,
            subscribers: subscribers
              .filter((s) => s.channel_id === c.stream_id)
              .map((s) => s.user_id),
          }
        : c,
    ),
  };
}
