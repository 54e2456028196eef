import { listNavigationViews } from "../actions/navigation-views";
import { listMutedUsers } from "../actions/muted-users";
import { concurrencyLimit } from "../lib/concurrency";
import { defaultChannelIds } from "../db/queries/channels";
import { topicPoliciesOf } from "../db/queries/topic-policies";
import { userById } from "../db/queries/users";
import type { Database } from "../db/database";
import type { Realm, User } from "../gen/prisma/client";
import { listAlertWords } from "../actions/alert-words";
import { listChannelFolders } from "../actions/channel-folders";
import { EMPTY_TOPIC_DISPLAY_NAME, listChannels } from "../actions/channels";
import { channelViews } from "../actions/channel-view";
import { listDrafts } from "../actions/drafts";
import { listCustomEmoji } from "../actions/custom-emoji";
import { listDevices } from "../push/registration";
import {
  lastPresenceUpdateId,
  legacyPresence,
  realmPresenceTimes,
  realmPresences,
} from "../actions/presence";
import { listLegacyFilters, listLinkifiers } from "../actions/realm-linkifiers";
import { listProfileFields } from "../actions/custom-profile-fields";
import { listReminders } from "../actions/reminders";
import { listScheduledMessages } from "../actions/scheduled-messages";
import { listPlaygrounds } from "../actions/realm-playgrounds";
import { realmSettingsDefaults } from "../lib/user-settings";
import { listSavedSnippets } from "../actions/saved-snippets";
import { listUserGroups } from "../actions/user-groups";
import { realmStatuses } from "../actions/user-status";
import { messagesFlagged, newestMessageId } from "../db/queries/unreads";
import type { AuthedUser } from "../caches/auth";
import type { Config } from "../lib/config";
import type { PresenceBoards } from "../caches/presence-boards";
import { MESSAGE_FLAGS } from "../lib/message-flag-bits";
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
  /** Presence in the modern form (by user id, active and idle times) instead of the legacy one. */
  slimPresence: boolean;
  /** The replica's presence boards, which answer the modern form. */
  presenceBoards: PresenceBoards;
  presenceHistoryDays: number | undefined;
  /** CHAT_CAN_ACCESS_ALL_USERS_GROUP_LIMITS_PRESENCE. */
  limitPresenceToAccessible: boolean;
  clientGravatar: boolean;
  includeSubscribers: boolean;
  capabilities: ClientCapabilities;
}

type State = Record<string, unknown>;

/** Parts of one register read at once: the pool connections one register may hold. */
export const REGISTER_PARALLEL_READS = 3;

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
  // Parts are read REGISTER_PARALLEL_READS at a time (each statement on a
  // pool connection of its own): a register waits for about a third of the
  // sum of its parts, and holds no more of the pool than that. The parts are
  // put together in the order they are listed here.
  const parts: Promise<State>[] = [];
  const reading = concurrencyLimit(REGISTER_PARALLEL_READS);
  const part = (read: () => Promise<State>) => parts.push(reading(read));
  // The user's own row, read once for the parts that need it.
  let row: Promise<User> | undefined;
  const ownRow = () => (row ??= userById(db, user.id));
  if (wants("alert_words")) part(async () => ({ alert_words: await listAlertWords(db, user.id) }));
  if (wants("channel_folders"))
    part(async () => ({ channel_folders: await listChannelFolders(db, realm.id, true) }));
  if (wants("custom_profile_fields"))
    part(async () => ({ custom_profile_fields: await listProfileFields(db, realm.id) }));
  if (wants("default_streams"))
    part(async () => {
      return { realm_default_streams: await defaultChannelIds(db, realm.id) };
    });
  if (wants("default_stream_groups"))
    part(() => Promise.resolve({ realm_default_stream_groups: [] }));
  if (wants("device")) part(async () => ({ devices: await listDevices(db, user.id) }));
  if (wants("drafts"))
    part(async () => ({
      drafts: (await ownRow()).enable_drafts_synchronization ? await listDrafts(db, user.id) : [],
    }));
  if (wants("message")) part(async () => ({ max_message_id: await newestMessageId(db, user.id) }));
  if (wants("message") && wants("update_message_flags"))
    part(async () => ({ unread_msgs: await unreadState(db, user.id, topicName) }));
  if (wants("muted_topics"))
    part(async () => {
      const muted = await topicPoliciesOf(db, user.id, 1);
      return {
        muted_topics: muted.map((t) => [
          t.channel.name,
          topicName(t.topic_name),
          Math.floor(t.last_updated.getTime() / 1000),
        ]),
      };
    });
  if (wants("muted_users")) part(async () => ({ muted_users: await listMutedUsers(db, user.id) }));
  if (wants("navigation_views"))
    part(async () => ({ navigation_views: await listNavigationViews(db, user.id) }));
  if (wants("onboarding_steps"))
    part(() => Promise.resolve({ onboarding_steps: [], navigation_tour_video_url: null }));
  if (wants("presence") && request.slimPresence)
    part(async () => {
      const { presences, lastUpdateId } = await realmPresenceTimes(
        db,
        request.presenceBoards,
        user,
        {
          limitToAccessible: request.limitPresenceToAccessible,
          ...(request.presenceHistoryDays === undefined
            ? {}
            : { historyDays: request.presenceHistoryDays }),
        },
      );
      return {
        presences,
        server_timestamp: Date.now() / 1000,
        presence_last_update_id: lastUpdateId,
      };
    });
  else if (wants("presence"))
    part(async () => {
      const [rows, lastUpdateId] = await Promise.all([
        realmPresences(db, user, {
          limitToAccessible: request.limitPresenceToAccessible,
          ...(request.presenceHistoryDays === undefined
            ? {}
            : { historyDays: request.presenceHistoryDays }),
        }),
        lastPresenceUpdateId(db, realm.id),
      ]);
      return {
        presences: Object.fromEntries(rows.map((p) => [p.email, legacyPresence(p)])),
        server_timestamp: Date.now() / 1000,
        presence_last_update_id: lastUpdateId,
      };
    });
  if (wants("realm")) part(() => realmState(db, config, realm));
  if (wants("realm_user_settings_defaults"))
    part(() =>
      Promise.resolve({
        realm_user_settings_defaults: realmSettingsDefaults(realm.user_settings_defaults),
      }),
    );
  if (wants("realm_playgrounds"))
    part(async () => ({ realm_playgrounds: await listPlaygrounds(db, realm.id) }));
  if (wants("realm_bot")) part(async () => ({ realm_bots: await ownBots(db, user) }));
  if (wants("realm_emoji"))
    part(async () => ({ realm_emoji: await listCustomEmoji(db, realm.id) }));
  if (wants("realm_filters"))
    part(async () => ({ realm_filters: await listLegacyFilters(db, realm.id) }));
  if (wants("realm_linkifiers"))
    part(async () => ({ realm_linkifiers: await listLinkifiers(db, realm.id) }));
  if (wants("realm_user")) part(() => peopleState(db, realm, user, request.clientGravatar));
  if (wants("realm_user_groups"))
    part(async () => ({
      realm_user_groups: await listUserGroups(db, realm.id, capabilities.includeDeactivatedGroups),
    }));
  if (wants("recent_private_conversations"))
    part(async () => ({ recent_private_conversations: await recentConversations(db, user.id) }));
  if (wants("reminders")) part(async () => ({ reminders: await listReminders(db, user.id) }));
  if (wants("saved_snippets"))
    part(async () => ({ saved_snippets: await listSavedSnippets(db, user.id) }));
  if (wants("scheduled_messages"))
    part(async () => ({ scheduled_messages: await listScheduledMessages(db, user.id) }));
  if (wants("starred_messages"))
    part(async () => ({
      starred_messages: await messagesFlagged(db, user.id, MESSAGE_FLAGS.starred),
    }));
  if (wants("stream"))
    part(async () => {
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
      return { streams: await channelViews(db, channels) };
    });
  if (wants("subscription"))
    part(async () =>
      subscriptionState(db, user, await ownRow(), {
        includeSubscribers: request.includeSubscribers,
        notificationSettingsNull: capabilities.notificationSettingsNull,
      }),
    );
  if (wants("user_settings")) part(async () => ({ user_settings: userSettings(await ownRow()) }));
  if (wants("user_status")) part(async () => ({ user_status: await realmStatuses(db, realm.id) }));
  if (wants("user_topic"))
    part(async () => {
      const topics = await topicPoliciesOf(db, user.id);
      return {
        user_topics: topics.map((t) => ({
          stream_id: t.channel_id,
          topic_name: topicName(t.topic_name),
          last_updated: Math.floor(t.last_updated.getTime() / 1000),
          visibility_policy: t.visibility_policy,
        })),
      };
    });
  if (wants("video_calls")) part(() => Promise.resolve({ has_zoom_token: false }));
  return Object.assign({}, ...(await Promise.all(parts))) as State;
}
