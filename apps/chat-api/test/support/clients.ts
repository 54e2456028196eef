/** What real Zulip clients send, for tests that act as one. */

/** What Zulip's mobile app asks for at start (its `fetch_event_types`). */
export const MOBILE_FETCH_TYPES = [
  "alert_words",
  "custom_profile_fields",
  "message",
  "muted_topics",
  "muted_users",
  "presence",
  "realm",
  "realm_emoji",
  "realm_filters",
  "realm_linkifiers",
  "realm_user",
  "realm_user_groups",
  "recent_private_conversations",
  "stream",
  "subscription",
  "update_message_flags",
  "user_settings",
  "user_status",
  "user_topic",
  "zulip_version",
];

export const MOBILE_CAPABILITIES = {
  notification_settings_null: true,
  bulk_message_deletion: true,
  user_avatar_url_field_optional: true,
  stream_typing_notifications: true,
  user_settings_object: true,
};
