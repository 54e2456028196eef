/** The fixed facts of channels that several modules share. */

/** `max_stream_name_length` and `max_stream_description_length` of this server. */
export const MAX_CHANNEL_NAME_LENGTH = 60;
export const MAX_CHANNEL_DESCRIPTION_LENGTH = 1024;

/** `max_topic_length`: muted topics are limited to it, a channel draft's topic is cut to it. */
export const MAX_TOPIC_LENGTH = 60;

/** The eleven group settings of a channel, in the API's names. */
export const CHANNEL_GROUP_SETTINGS = [
  "can_add_subscribers_group",
  "can_administer_channel_group",
  "can_create_topic_group",
  "can_delete_any_message_group",
  "can_delete_own_message_group",
  "can_move_messages_out_of_channel_group",
  "can_move_messages_within_channel_group",
  "can_remove_subscribers_group",
  "can_resolve_topics_group",
  "can_send_message_group",
  "can_subscribe_group",
] as const;

/** One of {@link CHANNEL_GROUP_SETTINGS}. */
export type ChannelGroupSetting = (typeof CHANNEL_GROUP_SETTINGS)[number];
