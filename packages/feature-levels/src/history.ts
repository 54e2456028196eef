/** What a feature level did to the API. */
export type Change = "introduced" | "deprecated" | "changed";

/** One entry of the feature-level history. */
export interface FeatureLevelEntry {
  /** The feature level at which the change took effect. */
  readonly level: number;
  /** Whether the level introduced, deprecated or changed something. */
  readonly change: Change;
  /** A stable name for the feature, to ask {@link hasFeature} about. */
  readonly feature: string;
  /** What changed, in one line. */
  readonly summary: string;
}

/**
 * The levels the API document names, oldest first. Zulip's feature levels:
 * level N means every feature introduced at or before N is available.
 */
export const FEATURE_LEVEL_HISTORY = [
  {
    level: 1,
    change: "introduced",
    feature: "feature_level",
    summary: "`chat_feature_level` in server_settings; `gitlab` authentication method",
  },
  {
    level: 17,
    change: "introduced",
    feature: "message_retention_days",
    summary: "`message_retention_days` when creating a channel",
  },
  {
    level: 88,
    change: "introduced",
    feature: "merge_base",
    summary: "`chat_merge_base` in server_settings",
  },
  {
    level: 91,
    change: "changed",
    feature: "message_retention_unlimited",
    summary: "`unlimited` replaces `forever` for message_retention_days",
  },
  {
    level: 116,
    change: "introduced",
    feature: "realm_web_public_access_enabled",
    summary: "`realm_web_public_access_enabled` in server_settings",
  },
  {
    level: 127,
    change: "introduced",
    feature: "user_group_membership",
    summary: "user group membership and subgroup endpoints",
  },
  {
    level: 142,
    change: "introduced",
    feature: "can_remove_subscribers_group",
    summary: "`can_remove_subscribers_group` channel setting",
  },
  {
    level: 153,
    change: "changed",
    feature: "batched_mark_as_read",
    summary: "mark_all_as_read works in batches",
  },
  {
    level: 167,
    change: "introduced",
    feature: "ignored_parameters_unsupported",
    summary: "successful responses list unsupported parameters",
  },
  {
    level: 169,
    change: "changed",
    feature: "idempotent_topic_muting",
    summary: "muting a muted topic or unmuting an unmuted one succeeds",
  },
  {
    level: 170,
    change: "deprecated",
    feature: "muted_topics_endpoint",
    summary: "PATCH /users/me/subscriptions/muted_topics, replaced by POST /user_topics",
  },
  {
    level: 171,
    change: "introduced",
    feature: "dev_fetch_api_key_user_id",
    summary: "`user_id` in dev_fetch_api_key",
  },
  {
    level: 178,
    change: "changed",
    feature: "presence_simplified",
    summary: "presence reports only the `website` client",
  },
  {
    level: 202,
    change: "introduced",
    feature: "linkifier_reorder",
    summary: "PATCH /realm/linkifiers reorders linkifiers",
  },
  {
    level: 209,
    change: "changed",
    feature: "non_admin_reusable_links",
    summary: "non-admin users see their own reusable invitation links",
  },
  {
    level: 211,
    change: "changed",
    feature: "mark_read_complete_flag",
    summary: "mark_all_as_read reports `complete` instead of `partially_completed`",
  },
  {
    level: 257,
    change: "introduced",
    feature: "realm_url",
    summary: "`realm_url` in server_settings; `realm_uri` deprecated",
  },
  {
    level: 267,
    change: "introduced",
    feature: "notify_referrer_on_join",
    summary: "`notify_referrer_on_join` on invitations",
  },
  {
    level: 303,
    change: "changed",
    feature: "deactivated_users_not_members",
    summary: "deactivated users are no group members and leave `direct_members`",
  },
  {
    level: 320,
    change: "changed",
    feature: "can_remove_subscribers_group_object",
    summary: "`can_remove_subscribers_group` takes the object form",
  },
  {
    level: 325,
    change: "introduced",
    feature: "can_administer_channel_group",
    summary: "`can_administer_channel_group` channel setting",
  },
  {
    level: 333,
    change: "introduced",
    feature: "can_send_message_group",
    summary: "`can_send_message_group` channel setting",
  },
  {
    level: 342,
    change: "introduced",
    feature: "can_add_subscribers_group",
    summary: "`can_add_subscribers_group` channel setting",
  },
  {
    level: 357,
    change: "introduced",
    feature: "can_subscribe_group",
    summary: "`can_subscribe_group` channel setting",
  },
  {
    level: 368,
    change: "introduced",
    feature: "saved_snippet_edit",
    summary: "PATCH /saved_snippets/{id}",
  },
  {
    level: 389,
    change: "introduced",
    feature: "channel_folder_id",
    summary: "`folder_id` when creating a channel",
  },
  {
    level: 391,
    change: "changed",
    feature: "deactivated_group_subgroups",
    summary: "subgroups of a deactivated group can be changed",
  },
  {
    level: 392,
    change: "introduced",
    feature: "topics_policy",
    summary: "`topics_policy` when creating a channel",
  },
  {
    level: 396,
    change: "introduced",
    feature: "can_move_messages_channel_groups",
    summary:
      "`can_move_messages_out_of_channel_group` and `can_move_messages_within_channel_group`",
  },
  {
    level: 399,
    change: "introduced",
    feature: "reminders",
    summary: "reminders: GET, POST and DELETE /reminders",
  },
  {
    level: 402,
    change: "introduced",
    feature: "can_resolve_topics_group",
    summary: "`can_resolve_topics_group` channel setting",
  },
  {
    level: 404,
    change: "introduced",
    feature: "empty_topic_only",
    summary: "`empty_topic_only` topics policy",
  },
  {
    level: 406,
    change: "introduced",
    feature: "e2ee_push_registration",
    summary: "POST /mobile_push/register for end-to-end-encrypted push",
  },
  {
    level: 407,
    change: "introduced",
    feature: "can_delete_message_groups",
    summary: "`can_delete_any_message_group` and `can_delete_own_message_group`",
  },
  {
    level: 417,
    change: "introduced",
    feature: "channels_create",
    summary: "POST /channels/create",
  },
  {
    level: 432,
    change: "changed",
    feature: "push_registration_432",
    summary: "push registration (one of the push levels 406, 432, 468, 483 the API document names)",
  },
  {
    level: 441,
    change: "introduced",
    feature: "can_create_topic_group",
    summary: "`can_create_topic_group` channel setting",
  },
  {
    level: 458,
    change: "changed",
    feature: "bots_in_group_membership",
    summary: "bot users can be queried for user group membership",
  },
  {
    level: 468,
    change: "changed",
    feature: "push_registration_redesign",
    summary: "push registration redesigned around `device_id` and `push_key_id`",
  },
  {
    level: 470,
    change: "introduced",
    feature: "remove_client_device",
    summary: "POST /remove_client_device",
  },
  {
    level: 483,
    change: "changed",
    feature: "legacy_push_cleanup",
    summary: "registering removes the user's matching legacy push registrations",
  },
  {
    level: 488,
    change: "introduced",
    feature: "discord_auth",
    summary: "`discord` authentication method",
  },
  {
    level: 496,
    change: "changed",
    feature: "bots_on_user_group_endpoints",
    summary: "bot users may call the user-group subgroup and membership endpoints",
  },
] as const satisfies readonly FeatureLevelEntry[];

/** A feature name of the history. */
export type Feature = (typeof FEATURE_LEVEL_HISTORY)[number]["feature"];

/** The feature level this server implements: all behaviour is that of the newest level. */
export const CHAT_FEATURE_LEVEL = 496;

const levelOf: ReadonlyMap<string, number> = new Map(
  FEATURE_LEVEL_HISTORY.map((entry) => [entry.feature, entry.level]),
);

/** The level at which `feature` took effect. */
export function featureLevelOf(feature: Feature): number {
  const level = levelOf.get(feature);
  if (level === undefined) throw new RangeError(`unknown feature ${feature}`);
  return level;
}

/**
 * Whether a client or server at `level` has `feature` (level N has every
 * change made at or before N). Clients that send no level are at 0.
 */
export function hasFeature(level: number, feature: Feature): boolean {
  return level >= featureLevelOf(feature);
}
