/**
 * A user's settings as `register`'s `user_settings` describes them (the
 * settings object of Zulip's web client, `user_settings.ts`). This server
 * stores two of them per user (`timezone`, `enable_drafts_synchronization`);
 * the rest are Zulip's defaults for a new account, the same for everyone
 * until `PATCH /settings` exists.
 */
export const DEFAULT_USER_SETTINGS = {
  allow_private_data_export: false,
  automatically_follow_topics_policy: 3,
  automatically_follow_topics_where_mentioned: true,
  automatically_unmute_topics_in_muted_streams_policy: 3,
  available_notification_sounds: ["chime-bell", "ding", "zulip"],
  color_scheme: 1,
  default_language: "en",
  demote_inactive_streams: 1,
  desktop_icon_count_display: 1,
  display_emoji_reaction_users: true,
  email_address_visibility: 1,
  email_notifications_batching_period_seconds: 120,
  emojiset: "google",
  emojiset_choices: [
    { key: "google", text: "Google" },
    { key: "twitter", text: "Twitter" },
    { key: "text", text: "Plain text" },
  ],
  enable_desktop_notifications: true,
  enable_digest_emails: true,
  enable_followed_topic_audible_notifications: true,
  enable_followed_topic_desktop_notifications: true,
  enable_followed_topic_email_notifications: true,
  enable_followed_topic_push_notifications: true,
  enable_followed_topic_wildcard_mentions_notify: true,
  enable_login_emails: true,
  enable_marketing_emails: true,
  enable_offline_email_notifications: true,
  enable_offline_push_notifications: true,
  enable_online_push_notifications: true,
  enable_sounds: true,
  enable_stream_audible_notifications: false,
  enable_stream_desktop_notifications: false,
  enable_stream_email_notifications: false,
  enable_stream_push_notifications: false,
  enter_sends: false,
  fluid_layout_width: false,
  hide_ai_features: false,
  high_contrast_mode: false,
  left_side_userlist: false,
  message_content_in_email_notifications: true,
  notification_sound: "zulip",
  pm_content_in_desktop_notifications: true,
  presence_enabled: true,
  realm_name_in_email_notifications_policy: 1,
  receives_typing_notifications: true,
  resolved_topic_notice_auto_read_policy: "except_followed",
  send_private_typing_notifications: true,
  send_read_receipts: true,
  send_stream_typing_notifications: true,
  starred_message_counts: true,
  translate_emoticons: false,
  twenty_four_hour_time: false,
  user_list_style: 2,
  web_animate_image_previews: "on_hover",
  web_channel_default_view: 1,
  web_escape_navigates_to_home_view: true,
  web_font_size_px: 16,
  web_home_view: "inbox",
  web_inbox_show_channel_folders: true,
  web_left_sidebar_show_channel_folders: true,
  web_left_sidebar_unreads_count_summary: true,
  web_line_height_percent: 122,
  web_mark_read_on_scroll_policy: 1,
  web_navigate_to_sent_message: true,
  web_stream_unreads_count_display_policy: 2,
  web_suggest_update_timezone: true,
  wildcard_mentions_notify: true,
} as const;

/** The stored settings of a user: two columns of `users`, and its `settings` object. */
export interface StoredUserSettings {
  timezone: string;
  enable_drafts_synchronization: boolean;
  settings?: unknown;
}

/** A setting's value. */
export type SettingValue = boolean | number | string;

/** `register`'s `user_settings` of a user: the defaults, with what they changed. */
export function userSettings(stored: StoredUserSettings) {
  const changed =
    stored.settings !== null && typeof stored.settings === "object"
      ? (stored.settings as Record<string, SettingValue>)
      : {};
  const known = Object.fromEntries(
    Object.entries(changed).filter(([name]) => name in SETTING_RULES),
  );
  return {
    ...DEFAULT_USER_SETTINGS,
    ...known,
    timezone: stored.timezone,
    enable_drafts_synchronization: stored.enable_drafts_synchronization,
  };
}

/** What values a setting takes (Zulip's validators). */
export type SettingRule =
  | { kind: "bool" }
  | { kind: "int"; values?: readonly number[]; min?: number; max?: number }
  | { kind: "string"; values?: readonly string[]; maxLength: number };

const bool = { kind: "bool" } as const;
const oneOf = (...values: number[]): SettingRule => ({ kind: "int", values });

/** The settings PATCH /settings changes, each with its values (as Zulip's `/settings` schema). */
export const SETTING_RULES: Record<string, SettingRule> = {
  allow_private_data_export: bool,
  automatically_follow_topics_policy: oneOf(1, 2, 3, 4),
  automatically_follow_topics_where_mentioned: bool,
  automatically_unmute_topics_in_muted_streams_policy: oneOf(1, 2, 3, 4),
  color_scheme: oneOf(1, 2, 3),
  default_language: { kind: "string", maxLength: 50 },
  demote_inactive_streams: oneOf(1, 2, 3),
  desktop_icon_count_display: oneOf(1, 2, 3, 4),
  display_emoji_reaction_users: bool,
  email_address_visibility: oneOf(1, 2, 3, 4, 5),
  email_notifications_batching_period_seconds: { kind: "int", min: 60, max: 604_800 },
  emojiset: { kind: "string", values: ["google", "twitter", "text"], maxLength: 20 },
  enable_desktop_notifications: bool,
  enable_digest_emails: bool,
  enable_drafts_synchronization: bool,
  enable_followed_topic_audible_notifications: bool,
  enable_followed_topic_desktop_notifications: bool,
  enable_followed_topic_email_notifications: bool,
  enable_followed_topic_push_notifications: bool,
  enable_followed_topic_wildcard_mentions_notify: bool,
  enable_login_emails: bool,
  enable_marketing_emails: bool,
  enable_offline_email_notifications: bool,
  enable_offline_push_notifications: bool,
  enable_online_push_notifications: bool,
  enable_sounds: bool,
  enable_stream_audible_notifications: bool,
  enable_stream_desktop_notifications: bool,
  enable_stream_email_notifications: bool,
  enable_stream_push_notifications: bool,
  enter_sends: bool,
  fluid_layout_width: bool,
  hide_ai_features: bool,
  high_contrast_mode: bool,
  left_side_userlist: bool,
  message_content_in_email_notifications: bool,
  notification_sound: {
    kind: "string",
    values: [...DEFAULT_USER_SETTINGS.available_notification_sounds, "none"],
    maxLength: 20,
  },
  pm_content_in_desktop_notifications: bool,
  presence_enabled: bool,
  realm_name_in_email_notifications_policy: oneOf(1, 2, 3),
  receives_typing_notifications: bool,
  send_private_typing_notifications: bool,
  send_read_receipts: bool,
  send_stream_typing_notifications: bool,
  starred_message_counts: bool,
  timezone: { kind: "string", maxLength: 40 },
  translate_emoticons: bool,
  twenty_four_hour_time: bool,
  user_list_style: oneOf(1, 2, 3),
  web_animate_image_previews: {
    kind: "string",
    values: ["always", "on_hover", "never"],
    maxLength: 10,
  },
  web_channel_default_view: oneOf(1, 2),
  web_escape_navigates_to_home_view: bool,
  web_font_size_px: { kind: "int", min: 12, max: 20 },
  web_home_view: {
    kind: "string",
    values: ["inbox", "recent_topics", "all_messages"],
    maxLength: 20,
  },
  web_line_height_percent: { kind: "int", min: 122, max: 158 },
  web_mark_read_on_scroll_policy: oneOf(1, 2, 3),
  web_navigate_to_sent_message: bool,
  web_stream_unreads_count_display_policy: oneOf(1, 2, 3),
  web_suggest_update_timezone: bool,
  wildcard_mentions_notify: bool,
};

/**
 * The settings an organization sets defaults of for its new users (PATCH
 * /realm/user_settings_defaults, Zulip's `RealmUserDefault`): personal
 * preferences, never identity.
 */
export const REALM_DEFAULT_SETTINGS = [
  "automatically_follow_topics_policy",
  "automatically_follow_topics_where_mentioned",
  "automatically_unmute_topics_in_muted_streams_policy",
  "color_scheme",
  "demote_inactive_streams",
  "desktop_icon_count_display",
  "display_emoji_reaction_users",
  "email_address_visibility",
  "email_notifications_batching_period_seconds",
  "emojiset",
  "enable_desktop_notifications",
  "enable_digest_emails",
  "enable_drafts_synchronization",
  "enable_followed_topic_audible_notifications",
  "enable_followed_topic_desktop_notifications",
  "enable_followed_topic_email_notifications",
  "enable_followed_topic_push_notifications",
  "enable_followed_topic_wildcard_mentions_notify",
  "enable_offline_email_notifications",
  "enable_offline_push_notifications",
  "enable_online_push_notifications",
  "enable_sounds",
  "enable_stream_audible_notifications",
  "enable_stream_desktop_notifications",
  "enable_stream_email_notifications",
  "enable_stream_push_notifications",
  "enter_sends",
  "fluid_layout_width",
  "hide_ai_features",
  "high_contrast_mode",
  "left_side_userlist",
  "message_content_in_email_notifications",
  "notification_sound",
  "pm_content_in_desktop_notifications",
  "presence_enabled",
  "realm_name_in_email_notifications_policy",
  "receives_typing_notifications",
  "send_private_typing_notifications",
  "send_read_receipts",
  "send_stream_typing_notifications",
  "starred_message_counts",
  "translate_emoticons",
  "twenty_four_hour_time",
  "user_list_style",
  "web_animate_image_previews",
  "web_channel_default_view",
  "web_escape_navigates_to_home_view",
  "web_font_size_px",
  "web_home_view",
  "web_line_height_percent",
  "web_mark_read_on_scroll_policy",
  "web_navigate_to_sent_message",
  "web_stream_unreads_count_display_policy",
  "web_suggest_update_timezone",
  "wildcard_mentions_notify",
] as const;

/** Register's settings of a realm's defaults that are not settable: Zulip's, shown as they are. */
const REALM_DEFAULT_FIXED = [
  "allow_private_data_export",
  "available_notification_sounds",
  "default_language",
  "emojiset_choices",
  "enable_login_emails",
  "enable_marketing_emails",
] as const;

/**
 * Register's `realm_user_settings_defaults`: Zulip's defaults with what the
 * organization changed (`stored`, the realm's `user_settings_defaults`).
 */
export function realmSettingsDefaults(stored: unknown) {
  const changed =
    stored !== null && typeof stored === "object" ? (stored as Record<string, SettingValue>) : {};
  const all: Record<string, unknown> = {
    ...DEFAULT_USER_SETTINGS,
    enable_drafts_synchronization: true,
  };
  for (const name of REALM_DEFAULT_SETTINGS) if (name in changed) all[name] = changed[name];
  return Object.fromEntries(
    [...REALM_DEFAULT_SETTINGS, ...REALM_DEFAULT_FIXED].sort().map((name) => [name, all[name]]),
  );
}

/** A language code as Zulip's settings take it: `en`, `pt-br`, `zh-hans`. */
export const LANGUAGE_CODE = /^[a-zA-Z]{2,3}([-_][a-zA-Z0-9]{2,8})*$/;
