/**
 * The URL table: every operation of the API, one row each (method, path under
 * `/api/v1`, endpoint), in the order of Zulip's API documentation. The router,
 * the 404/405 answers and the OpenAPI document are built from it, and from
 * nothing else. An endpoint is declared in the route module named after its
 * URL (`routes/drafts.ts` for `/drafts`); `url()` checks that the path's
 * `{...}` segments are the ones its handler reads.
 */
import { Api, url } from "./http/typed-endpoint";
import { botRoutes } from "./routes/bots";
import { channelFolderRoutes } from "./routes/channel-folders";
import { channelRoutes } from "./routes/channels";
import { draftRoutes } from "./routes/drafts";
import { eventRoutes } from "./routes/events";
import { inviteRoutes } from "./routes/invites";
import { messageFlagRoutes } from "./routes/message-flags";
import { messageRoutes } from "./routes/messages";
import { openApiRoutes } from "./routes/openapi";
import { presenceRoutes } from "./routes/presence";
import { pushRoutes } from "./routes/push";
import { realmRoutes } from "./routes/realm";
import { reactionRoutes } from "./routes/reactions";
import { reminderRoutes } from "./routes/reminders";
import { scheduledMessageRoutes } from "./routes/scheduled-messages";
import { savedSnippetRoutes } from "./routes/saved-snippets";
import { navigationViewRoutes } from "./routes/navigation-views";
import { serverRoutes } from "./routes/server";
import { subscriptionRoutes } from "./routes/subscriptions";
import { topicRoutes } from "./routes/topics";
import { uploadRoutes } from "./routes/uploads";
import { userGroupRoutes } from "./routes/user-groups";
import { userRoutes } from "./routes/users";
import type { Services } from "./http/context";

/** The API of `services`: the URL table's rows. */
export function buildApi(services: Services): Api {
  const api = new Api();
  const messages = messageRoutes(services);
  const flags = messageFlagRoutes(services);
  const uploads = uploadRoutes(services);
  const reminders = reminderRoutes(services);
  const scheduled = scheduledMessageRoutes(services);
  const drafts = draftRoutes(services);
  const snippets = savedSnippetRoutes(services);
  const views = navigationViewRoutes(services);
  const reactions = reactionRoutes(services);
  const subscriptions = subscriptionRoutes(services);
  const channels = channelRoutes(services);
  const topics = topicRoutes(services);
  const folders = channelFolderRoutes(services);
  const users = userRoutes(services);
  const groups = userGroupRoutes(services);
  const presence = presenceRoutes(services);
  const bots = botRoutes(services);
  const invites = inviteRoutes(services);
  const server = serverRoutes(services);
  const realm = realmRoutes(services);
  const events = eventRoutes(services);
  const push = pushRoutes(services);
  const openapi = openApiRoutes(services, api);

  [
    // Messages
    url("POST", "/messages", messages.sendMessage),
    url("GET", "/messages", messages.getMessages),
    url("GET", "/messages/matches_narrow", messages.matchesNarrow),
    url("GET", "/messages/{message_id}", messages.getMessage),
    url("PATCH", "/messages/{message_id}", messages.updateMessage),
    url("DELETE", "/messages/{message_id}", messages.deleteMessage),
    url("GET", "/messages/{message_id}/history", messages.getMessageHistory),
    url("GET", "/messages/{message_id}/read_receipts", messages.getReadReceipts),
    url("POST", "/messages/render", messages.renderMessage),
    url("POST", "/messages/{message_id}/reactions", reactions.addReaction),
    url("DELETE", "/messages/{message_id}/reactions", reactions.removeReaction),
    url("POST", "/messages/{message_id}/report", messages.reportMessage),
    url("POST", "/submessage", messages.addSubmessage),
    url("POST", "/typing", messages.setTypingStatus),
    url("POST", "/messages/{message_id}/typing", messages.setEditTypingStatus),
    url("POST", "/mark_all_as_read", flags.markAllAsRead),
    url("POST", "/mark_stream_as_read", flags.markChannelAsRead),
    url("POST", "/mark_topic_as_read", flags.markTopicAsRead),
    url("POST", "/messages/flags", flags.updateFlags),
    url("POST", "/messages/flags/narrow", flags.updateFlagsForNarrow),
    url("POST", "/user_uploads", uploads.uploadFile),
    url("GET", "/user_uploads/{realm_id_str}/{filename}", uploads.getFileTemporaryUrl),
    url("GET", "/attachments", uploads.getAttachments),
    url("DELETE", "/attachments/{attachment_id}", uploads.removeAttachment),
    // Scheduled messages
    url("GET", "/scheduled_messages", scheduled.getScheduledMessages),
    url("POST", "/scheduled_messages", scheduled.createScheduledMessage),
    url("PATCH", "/scheduled_messages/{scheduled_message_id}", scheduled.updateScheduledMessage),
    url("DELETE", "/scheduled_messages/{scheduled_message_id}", scheduled.deleteScheduledMessage),
    // Message reminders
    url("POST", "/reminders", reminders.createMessageReminder),
    url("GET", "/reminders", reminders.getReminders),
    url("DELETE", "/reminders/{reminder_id}", reminders.deleteReminder),
    // Drafts
    url("GET", "/drafts", drafts.getDrafts),
    url("POST", "/drafts", drafts.createDrafts),
    url("PATCH", "/drafts/{draft_id}", drafts.editDraft),
    url("DELETE", "/drafts/{draft_id}", drafts.deleteDraft),
    // Saved snippets
    url("GET", "/saved_snippets", snippets.getSavedSnippets),
    url("POST", "/saved_snippets", snippets.createSavedSnippet),
    url("PATCH", "/saved_snippets/{saved_snippet_id}", snippets.editSavedSnippet),
    url("DELETE", "/saved_snippets/{saved_snippet_id}", snippets.deleteSavedSnippet),
    url("GET", "/navigation_views", views.getNavigationViews),
    url("POST", "/navigation_views", views.addNavigationView),
    url("PATCH", "/navigation_views/{fragment}", views.editNavigationView),
    url("DELETE", "/navigation_views/{fragment}", views.removeNavigationView),
    // Channels
    url("GET", "/users/me/subscriptions", subscriptions.getSubscriptions),
    url("POST", "/users/me/subscriptions", subscriptions.subscribe),
    url("DELETE", "/users/me/subscriptions", subscriptions.unsubscribe),
    url("PATCH", "/users/me/subscriptions", subscriptions.updateSubscriptions),
    url("POST", "/users/me/subscriptions/properties", subscriptions.setProperties),
    url("PATCH", "/users/me/subscriptions/muted_topics", subscriptions.muteTopic),
    url("GET", "/users/{user_id}/subscriptions/{stream_id}", users.getSubscriptionStatus),
    url("GET", "/streams", channels.getStreams),
    url("GET", "/streams/{stream_id}", channels.getStreamById),
    url("GET", "/get_stream_id", channels.getStreamId),
    url("GET", "/streams/{stream_id}/members", channels.getSubscribers),
    url("GET", "/streams/{stream_id}/email_address", channels.getStreamEmailAddress),
    url("GET", "/users/me/{stream_id}/topics", topics.getStreamTopics),
    url("POST", "/user_topics", topics.setTopicVisibility),
    url("POST", "/channels/create", channels.createChannel),
    url("PATCH", "/streams/{stream_id}", channels.updateStream),
    url("DELETE", "/streams/{stream_id}", channels.archiveStream),
    url("POST", "/streams/{stream_id}/delete_topic", channels.deleteTopic),
    url("POST", "/default_streams", channels.addDefaultStream),
    url("DELETE", "/default_streams", channels.removeDefaultStream),
    url("POST", "/channel_folders/create", folders.createChannelFolder),
    url("GET", "/channel_folders", folders.getChannelFolders),
    url("PATCH", "/channel_folders", folders.reorderChannelFolders),
    url("PATCH", "/channel_folders/{channel_folder_id}", folders.updateChannelFolder),
    // Users
    url("GET", "/users", users.getUsers),
    url("POST", "/users", users.createUser),
    url("GET", "/users/me", users.getOwnUser),
    url("DELETE", "/users/me", users.deactivateOwnUser),
    url("GET", "/users/me/pointer", users.getPointer),
    url("POST", "/users/me/pointer", users.updatePointer),
    url("GET", "/users/me/alert_words", users.getAlertWords),
    url("POST", "/users/me/alert_words", users.addAlertWords),
    url("DELETE", "/users/me/alert_words", users.removeAlertWords),
    url("POST", "/users/me/status", users.setStatus),
    url("POST", "/users/me/muted_users/{muted_user_id}", users.muteUser),
    url("DELETE", "/users/me/muted_users/{muted_user_id}", users.unmuteUser),
    url("PATCH", "/settings", users.updateSettings),
    url("GET", "/users/{user_id}", users.getUser),
    url("PATCH", "/users/{user_id}", users.updateUser),
    url("DELETE", "/users/{user_id}", users.deactivateUser),
    url("POST", "/users/{user_id}/reactivate", users.reactivateUser),
    url("GET", "/users/{user_id}/status", users.getUserStatus),
    url("GET", "/users/{email}", users.getUserByEmail),
    url("PATCH", "/users/{email}", users.updateUserByEmail),
    url("POST", "/user_groups/create", groups.createUserGroup),
    url("GET", "/user_groups", groups.getUserGroups),
    url("PATCH", "/user_groups/{user_group_id}", groups.updateUserGroup),
    url("POST", "/user_groups/{user_group_id}/members", groups.updateUserGroupMembers),
    url("GET", "/user_groups/{user_group_id}/members", groups.getUserGroupMembers),
    url("POST", "/user_groups/{user_group_id}/subgroups", groups.updateUserGroupSubgroups),
    url("GET", "/user_groups/{user_group_id}/subgroups", groups.getUserGroupSubgroups),
    url("GET", "/user_groups/{user_group_id}/members/{user_id}", groups.getIsUserGroupMember),
    url("POST", "/user_groups/{user_group_id}/deactivate", groups.deactivateUserGroup),
    url("POST", "/users/me/presence", presence.updatePresence),
    url("GET", "/realm/presence", presence.getPresence),
    url("GET", "/users/{user_id_or_email}/presence", presence.getUserPresence),
    url("POST", "/bots", bots.createBot),
    url("POST", "/bots/{bot_id}/api_key/regenerate", bots.regenerateBotApiKey),
    // Invitations
    url("GET", "/invites", invites.getInvites),
    url("POST", "/invites", invites.sendInvites),
    url("POST", "/invites/multiuse", invites.createInviteLink),
    url("DELETE", "/invites/{invite_id}", invites.revokeEmailInvite),
    url("POST", "/invites/{invite_id}/resend", invites.resendEmailInvite),
    url("PATCH", "/invites/multiuse/{invite_id}", invites.editInviteLink),
    url("DELETE", "/invites/multiuse/{invite_id}", invites.revokeInviteLink),
    // Server and organizations
    url("GET", "/server_settings", server.getServerSettings),
    url("PATCH", "/realm", realm.updateRealm),
    url("GET", "/realm/emoji", realm.getCustomEmoji),
    url("POST", "/realm/emoji/{emoji_name}", realm.uploadCustomEmoji),
    url("DELETE", "/realm/emoji/{emoji_name}", realm.deactivateCustomEmoji),
    url("GET", "/realm/linkifiers", realm.getLinkifiers),
    url("GET", "/realm/filters", realm.getLegacyFilters),
    url("POST", "/realm/filters", realm.addLinkifier),
    url("PATCH", "/realm/filters/{filter_id}", realm.updateLinkifier),
    url("DELETE", "/realm/filters/{filter_id}", realm.removeLinkifier),
    url("PATCH", "/realm/linkifiers", realm.reorderLinkifiers),
    url("PATCH", "/realm/user_settings_defaults", realm.updateRealmUserSettingsDefaults),
    url("POST", "/export/realm", realm.exportRealm),
    url("GET", "/export/realm", realm.getRealmExports),
    url("GET", "/export/realm/consents", realm.getExportConsents),
    url("POST", "/realm/playgrounds", realm.addPlayground),
    url("DELETE", "/realm/playgrounds/{playground_id}", realm.removePlayground),
    url("GET", "/realm/profile_fields", realm.getCustomProfileFields),
    url("PATCH", "/realm/profile_fields", realm.reorderCustomProfileFields),
    url("POST", "/realm/profile_fields", realm.createCustomProfileField),
    // Real-time events
    url("POST", "/register", events.registerQueue),
    url("GET", "/events", events.getEvents),
    url("DELETE", "/events", events.deleteQueue),
    // Specialty endpoints
    url("POST", "/fetch_api_key", server.fetchApiKey),
    url("POST", "/dev_fetch_api_key", server.devFetchApiKey),
    url("POST", "/register_client_device", push.registerClientDevice),
    url("POST", "/remove_client_device", push.removeClientDevice),
    url("POST", "/mobile_push/register", push.registerPushDevice),
    url("POST", "/mobile_push/test_notification", push.sendTestNotification),
    url("POST", "/users/me/apns_device_token", push.addApnsToken),
    url("DELETE", "/users/me/apns_device_token", push.removeApnsToken),
    url("POST", "/users/me/android_gcm_reg_id", push.addFcmToken),
    url("DELETE", "/users/me/android_gcm_reg_id", push.removeFcmToken),
    url("GET", "/openapi.json", openapi.getOpenapi),
  ].forEach((row) => {
    api.add(row);
  });
  return api;
}
