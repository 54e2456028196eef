import type { Database } from "../db/database";
import type { Realm, User } from "../gen/prisma/client";
import { listAlertWords } from "../actions/alert-words";
import { listChannelFolders } from "../actions/channel-folders";
import { EMPTY_TOPIC_DISPLAY_NAME } from "../actions/channel-lookups";
import { channelViews } from "../actions/channel-view";
import { listChannels } from "../actions/channels";
import { listDrafts } from "../actions/drafts";
import { lastPresenceUpdateId, legacyPresence, realmPresences } from "../actions/presence";
import { listLegacyFilters, listLinkifiers, listProfileFields } from "../actions/realm-config";
import { listReminders } from "../actions/reminders";
import { listSavedSnippets } from "../actions/saved-snippets";
import { listUserGroups } from "../actions/user-groups";
import { realmStatuses } from "../actions/user-status";
import { messagesFlagged, newestMessageId } from "../db/queries/unreads";
import type { AuthedUser } from "../lib/auth";
import type { Config } from "../lib/config";
import { MESSAGE_FLAGS } from "../lib/message-flags";
import { userSettings } from "../lib/user-settings";
import { realmState } from "./realm-state";
import { recentConversations, unreadState } from "./state-messages";
import { ownBots, peopleState } from "./state-people";
import { subscriptionState } from "./state-subscriptions";

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
  // The user's own row, read once for the parts that need it.
  let row: User | undefined;
  const ownRow = async () =>
    (row ??= await db.prisma.user.findUniqueOrThrow({ where: { id: user.id } }));
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
  if (wants("drafts"))
    state.drafts = (await ownRow()).enable_drafts_synchronization
      ? await listDrafts(db, user.id)
      : [];
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
  if (wants("realm_user"))
    Object.assign(state, await peopleState(db, realm, user, request.clientGravatar));
  if (wants("realm_user_groups"))
    state.realm_user_groups = await listUserGroups(
      db,
      realm.id,
      capabilities.includeDeactivatedGroups,
    );
  if (wants("recent_private_conversations"))
    state.recent_private_conversations = await recentConversations(db, user.id);
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
  if (wants("subscription"))
    Object.assign(
      state,
      await subscriptionState(db, user, await ownRow(), {
        includeSubscribers: request.includeSubscribers,
        notificationSettingsNull: capabilities.notificationSettingsNull,
      }),
    );
  if (wants("user_settings")) state.user_settings = userSettings(await ownRow());
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
