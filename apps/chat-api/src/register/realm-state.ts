import {
  FORM_PASSWORD_MAX_LENGTH,
  PASSWORD_MIN_GUESSES,
  PASSWORD_MIN_LENGTH,
} from "../lib/password-strength";
import { realmDomains } from "../db/queries/realms";
import type { Tx } from "../db/kysely";
import type { Realm } from "../gen/prisma/client";
import {
  MAX_CHANNEL_DESCRIPTION_LENGTH,
  MAX_CHANNEL_NAME_LENGTH,
  MAX_TOPIC_LENGTH,
} from "../actions/channel-settings";
import { MAX_MESSAGE_LENGTH } from "../actions/message-checks";
import { REPORT_TYPES } from "../actions/message-reports";
import { emojiDataPath } from "../lib/emoji";
import { type SystemGroupName, systemGroupIds } from "../actions/realm-creation";
import { listLinkifiers } from "../actions/realm-linkifiers";
import { listProfileFields } from "../actions/custom-profile-fields";
import { REALM_GROUP_SETTING_NAMES, realmGroupSetting } from "../actions/realm-settings";
import { realmAuthenticationMethods } from "../lib/auth-methods";
import type { Config } from "../lib/config";
import { renderPlain } from "../lib/render";
import { realmIconUrl, realmUrl } from "../lib/realm-url";
import { EMPTY_TOPIC_DISPLAY_NAME } from "../actions/channels";
import { VERSION_FIELDS } from "../lib/version";

/** Zulip's custom profile field types (`custom_profile_field_types`). */
const PROFILE_FIELD_TYPES = {
  SHORT_TEXT: { id: 1, name: "Text (short)" },
  LONG_TEXT: { id: 2, name: "Text (long)" },
  SELECT: { id: 3, name: "List of options" },
  DATE: { id: 4, name: "Date" },
  URL: { id: 5, name: "Link" },
  USER: { id: 6, name: "Users" },
  EXTERNAL_ACCOUNT: { id: 7, name: "External account" },
  PRONOUNS: { id: 8, name: "Pronouns" },
};

/**
 * Realm permissions this server has no column for: Zulip's defaults for a
 * new organization, by system group.
 */
const FIXED_REALM_GROUPS: Record<string, SystemGroupName> = {
  can_add_custom_emoji_group: "role:members",
  can_create_write_only_bots_group: "role:members",
  can_delete_any_message_group: "role:administrators",
  can_delete_own_message_group: "role:everyone",
  can_manage_billing_group: "role:administrators",
  can_mention_many_users_group: "role:administrators",
  can_move_messages_between_channels_group: "role:members",
  can_move_messages_between_topics_group: "role:everyone",
  can_resolve_topics_group: "role:everyone",
  can_set_delete_message_policy_group: "role:moderators",
  can_set_topics_policy_group: "role:moderators",
  can_summarize_topics_group: "role:everyone",
  create_multiuse_invite_group: "role:administrators",
  direct_message_initiator_group: "role:everyone",
  direct_message_permission_group: "role:everyone",
};

/**
 * `realm_wildcard_mention_policy`, deprecated for `can_mention_many_users_group`
 * (feature level 352) and still sent: the policy of each system group.
 */
const WILDCARD_MENTION_POLICY: Partial<Record<SystemGroupName, number>> = {
  "role:everyone": 1,
  "role:members": 2,
  "role:fullmembers": 3,
  "role:administrators": 5,
  "role:nobody": 6,
  "role:moderators": 7,
};

/** Seconds a client should wait on `GET /events` before it gives up (Zulip's 90 s cap). */
export function longpollTimeoutSeconds(config: Config): number {
  return Math.min(90, Math.ceil(config.CHAT_EVENT_HEARTBEAT_SECONDS) + 10);
}

/**
 * The `realm` state of `POST /register`: the organization's settings as
 * Zulip's `realm_*` keys, the server's limits and features (`max_*`,
 * `server_*`). What this server does not have is answered as Zulip answers
 * an organization with the feature off (no custom emoji, no video calls,
 * no uploads quota).
 */
export async function realmState(tx: Tx, config: Config, realm: Realm) {
  const groups = await systemGroupIds(tx, realm.id);
  const url = realmUrl(config, realm);
  return {
    ...VERSION_FIELDS,
    custom_profile_fields: await listProfileFields(tx, realm.id),
    custom_profile_field_types: PROFILE_FIELD_TYPES,
    event_queue_longpoll_timeout_seconds: longpollTimeoutSeconds(config),
    giphy_api_key: "",
    giphy_rating_options: { disabled: { id: 0, name: "GIPHY integration disabled" } },
    max_avatar_file_size_mib: 5,
    max_file_upload_size_mib: config.CHAT_MAX_UPLOAD_MIB,
    max_icon_file_size_mib: 5,
    max_logo_file_size_mib: 5,
    max_message_length: MAX_MESSAGE_LENGTH,
    max_stream_description_length: MAX_CHANNEL_DESCRIPTION_LENGTH,
    max_stream_name_length: MAX_CHANNEL_NAME_LENGTH,
    max_topic_length: MAX_TOPIC_LENGTH,
    max_bulk_new_subscription_messages: 100,
    password_min_length: PASSWORD_MIN_LENGTH,
    password_max_length: FORM_PASSWORD_MAX_LENGTH,
    password_min_guesses: PASSWORD_MIN_GUESSES,
    realm_allow_message_editing: realm.allow_message_editing,
    realm_authentication_methods: realmAuthenticationMethods(config, realm),
    realm_available_video_chat_providers: { disabled: { name: "None", id: 0 } },
    realm_avatar_changes_disabled: false,
    realm_bot_domain: new URL(url).hostname,
    ...Object.fromEntries(
      REALM_GROUP_SETTING_NAMES.map((name) => [
        `realm_${name}`,
        realmGroupSetting(realm, name, groups),
      ]),
    ),
    ...Object.fromEntries(
      Object.entries(FIXED_REALM_GROUPS).map(([name, system]) => [`realm_${name}`, groups[system]]),
    ),
    realm_wildcard_mention_policy:
      WILDCARD_MENTION_POLICY[FIXED_REALM_GROUPS.can_mention_many_users_group ?? "role:everyone"] ??
      1,
    realm_date_created: Math.floor(realm.date_created.getTime() / 1000),
    realm_default_code_block_language: "",
    realm_default_external_accounts: {},
    realm_default_language: realm.default_language,
    realm_description: await renderPlain(realm.description),
    realm_digest_emails_enabled: false,
    realm_digest_weekday: 1,
    realm_disallow_disposable_email_addresses: realm.disallow_disposable_email_addresses,
    realm_domains: await realmDomains(tx, realm.id),
    realm_email_auth_enabled: realm.email_auth_enabled,
    realm_email_changes_disabled: false,
    realm_emails_restricted_to_domains: realm.emails_restricted_to_domains,
    realm_embedded_bots: [],
    realm_empty_topic_display_name: EMPTY_TOPIC_DISPLAY_NAME,
    realm_enable_guest_user_dm_warning: true,
    realm_enable_guest_user_indicator: true,
    realm_enable_read_receipts: true,
    realm_enable_spectator_access: realm.enable_spectator_access,
    realm_giphy_rating: 0,
    realm_icon_source: realm.icon_url === null ? "G" : "U",
    realm_icon_url: realmIconUrl(config, realm),
    realm_incoming_webhook_bots: [],
    realm_inline_image_preview: false,
    realm_inline_url_embed_preview: false,
    realm_invite_required: realm.invite_required,
    realm_jitsi_server_url: null,
    realm_linkifiers: await listLinkifiers(tx, realm.id),
    realm_logo_source: "D",
    realm_logo_url: realmIconUrl(config, realm),
    realm_message_content_allowed_in_email_notifications: true,
    realm_message_content_edit_limit_seconds: realm.message_content_edit_limit_seconds,
    realm_message_content_delete_limit_seconds: realm.message_content_delete_limit_seconds,
    realm_message_edit_history_visibility_policy: "all",
    realm_message_retention_days: realm.message_retention_days ?? -1,
    realm_moderation_request_channel_id: realm.moderation_request_channel_id ?? -1,
    realm_move_messages_between_streams_limit_seconds:
      realm.move_messages_between_streams_limit_seconds,
    realm_move_messages_within_stream_limit_seconds:
      realm.move_messages_within_stream_limit_seconds,
    realm_name: realm.name,
    realm_name_changes_disabled: false,
    realm_new_stream_announcements_stream_id: realm.new_stream_announcements_stream_id ?? -1,
    realm_night_logo_source: "D",
    realm_night_logo_url: realmIconUrl(config, realm),
    realm_org_type: 0,
    realm_password_auth_enabled: realm.password_auth_enabled,
    realm_plan_type: 1,
    realm_presence_disabled: false,
    realm_push_notifications_enabled: config.CHAT_PUSH_BOUNCER_URL !== undefined,
    realm_push_notifications_enabled_end_timestamp: null,
    realm_require_e2ee_push_notifications: false,
    realm_require_unique_names: false,
    realm_send_channel_events_messages: true,
    realm_send_welcome_emails: false,
    realm_signup_announcements_stream_id: -1,
    realm_topics_policy: "allow_empty_topic",
    realm_upload_quota_mib: null,
    realm_uri: url,
    realm_url: url,
    realm_video_chat_provider: 0,
    realm_waiting_period_threshold: 0,
    realm_want_advertise_in_communities_directory: false,
    realm_web_public_access_enabled: config.CHAT_WEB_PUBLIC_STREAMS_ENABLED,
    realm_welcome_message_custom_text: "",
    realm_zulip_update_announcements_stream_id: -1,
    server_avatar_changes_disabled: false,
    server_can_summarize_topics: false,
    server_emoji_data_url: `${url}${emojiDataPath()}`,
    server_inline_image_preview: false,
    server_inline_url_embed_preview: false,
    server_jitsi_server_url: null,
    server_max_deactivated_realm_deletion_days: null,
    server_min_deactivated_realm_deletion_days: null,
    server_name_changes_disabled: false,
    server_needs_upgrade: false,
    server_presence_offline_threshold_seconds: 140,
    server_presence_ping_interval_seconds: 60,
    server_report_message_types: REPORT_TYPES.map((t) => ({ key: t.key, name: t.name })),
    server_thumbnail_formats: [],
    server_typing_started_expiry_period_milliseconds: 15000,
    server_typing_started_wait_period_milliseconds: 10000,
    server_typing_stopped_wait_period_milliseconds: 5000,
    server_web_public_streams_enabled: config.CHAT_WEB_PUBLIC_STREAMS_ENABLED,
    settings_send_digest_emails: false,
    stop_words: [],
    upgrade_text_for_wide_organization_logo: "",
    zulip_plan_is_not_limited: true,
  };
}
