import { doSetDefaultChannel } from "../actions/default-channels";
import {
  accessChannelById,
  channelEmailAddress,
  channelIdOf,
  channelSubscribers,
  doArchiveChannel,
  listChannels,
} from "../actions/channels";
import { channelViews } from "../actions/channel-view";
import { z } from "zod";
import { type NewChannel, doCreateChannel, parseRetentionDays } from "../actions/channel-create";
import {
  CHANNEL_GROUP_SETTINGS,
  MAX_CHANNEL_DESCRIPTION_LENGTH,
} from "../actions/channel-settings";
import {
  bool,
  groupSettingParam,
  groupSettingUpdateParam,
  int,
  json,
  oneOf,
  type ParamValues,
  str,
} from "../http/params";
import { type ChannelUpdate, doUpdateChannel } from "../actions/channel-update";
import { doDeleteTopic } from "../actions/topic-deletion";
import { userEndpoint } from "../http/typed-endpoint";
import type { Services } from "../http/context";

/** The options of a new channel, shared by POST /channels/create and POST /users/me/subscriptions. */
export const channelOptionParams = {
  announce: bool().default(false),
  invite_only: bool().default(false),
  is_web_public: bool().default(false),
  is_default_stream: bool().default(false),
  folder_id: int({ min: 0 }).optional(),
  topics_policy: oneOf([
    "inherit",
    "allow_empty_topic",
    "disable_empty_topic",
    "empty_topic_only",
  ]).default("inherit"),
  history_public_to_subscribers: bool().optional(),
  message_retention_days: str().optional(),
  can_add_subscribers_group: groupSettingParam().optional(),
  can_administer_channel_group: groupSettingParam().optional(),
  can_create_topic_group: groupSettingParam().optional(),
  can_delete_any_message_group: groupSettingParam().optional(),
  can_delete_own_message_group: groupSettingParam().optional(),
  can_move_messages_out_of_channel_group: groupSettingParam().optional(),
  can_move_messages_within_channel_group: groupSettingParam().optional(),
  can_remove_subscribers_group: groupSettingParam().optional(),
  can_resolve_topics_group: groupSettingParam().optional(),
  can_send_message_group: groupSettingParam().optional(),
  can_subscribe_group: groupSettingParam().optional(),
};

/** {@link channelOptionParams} as the actions take them. */
export function channelOptions(
  params: ParamValues<typeof channelOptionParams>,
): Omit<NewChannel, "name" | "description" | "subscribers"> {
  return {
    announce: params.announce,
    inviteOnly: params.invite_only,
    isWebPublic: params.is_web_public,
    isDefaultStream: params.is_default_stream,
    folderId: params.folder_id,
    topicsPolicy: params.topics_policy,
    historyPublicToSubscribers: params.history_public_to_subscribers,
    messageRetentionDays:
      params.message_retention_days === undefined
        ? null
        : parseRetentionDays(params.message_retention_days),
    settings: Object.fromEntries(CHANNEL_GROUP_SETTINGS.map((name) => [name, params[name]])),
  };
}

/** Channel and topic operations. */
export function channelRoutes({ db, config }: Services) {
  const defaultStreamEndpoint = (operationId: string, summary: string, isDefault: boolean) =>
    userEndpoint(
      {
        operationId,
        summary,
        tag: "channels",
        access: { role: "administrator" },
        params: { stream_id: int() },
      },
      async ({ user, params }) => {
        await doSetDefaultChannel(db, user, params.stream_id, isDefault);
        return {};
      },
    );
  const creation = { webPublicStreamsEnabled: config.CHAT_WEB_PUBLIC_STREAMS_ENABLED };
  return {
    createChannel: userEndpoint(
      {
        operationId: "create-channel",
        summary: "Create a channel",
        tag: "channels",
        params: {
          name: str({ ownNulCheck: true }),
          description: str({ maxLength: MAX_CHANNEL_DESCRIPTION_LENGTH }).default(""),
          subscribers: json(z.array(z.int32())),
          ...channelOptionParams,
        },
      },
      async ({ user, params }) => {
        const { name, description, subscribers } = params;
        const id = await doCreateChannel(
          db,
          user,
          { name, description, subscribers, ...channelOptions(params) },
          creation,
        );
        return { id };
      },
    ),
    getStreams: userEndpoint(
      {
        operationId: "get-streams",
        summary: "Get all channels",
        tag: "channels",
        params: {
          include_public: bool().default(true),
          include_web_public: bool().default(false),
          include_subscribed: bool().default(true),
          exclude_archived: bool().default(true),
          include_all_active: bool().default(false).describe("Deprecated: include_all"),
          include_all: bool().default(false),
          include_default: bool().default(false),
          include_owner_subscribed: bool().default(false),
          include_can_access_content: bool().default(false),
        },
      },
      async ({ user, params }) => {
        const channels = await listChannels(db, user, {
          includePublic: params.include_public,
          includeWebPublic: params.include_web_public,
          includeSubscribed: params.include_subscribed,
          excludeArchived: params.exclude_archived,
          includeAll: params.include_all || params.include_all_active,
          includeDefault: params.include_default,
          includeOwnerSubscribed: params.include_owner_subscribed,
          includeCanAccessContent: params.include_can_access_content,
        });
        const views = await channelViews(db, channels);
        return {
          streams: params.include_default
            ? views.map((view, i) => ({ ...view, is_default: channels[i]?.is_default_stream }))
            : views,
        };
      },
    ),
    getStreamById: userEndpoint(
      {
        pathParams: ["stream_id"],
        operationId: "get-stream-by-id",
        summary: "Get a channel by ID",
        tag: "channels",
        params: {},
      },
      async ({ user, path }) => {
        const channel = await accessChannelById(db, user, path.stream_id);
        const [stream] = await channelViews(db, [channel]);
        return { stream };
      },
    ),

    getStreamEmailAddress: userEndpoint(
      {
        pathParams: ["stream_id"],
        operationId: "get-stream-email-address",
        summary: "Get a channel's email address",
        tag: "channels",
        params: {
          sender_id: int({ min: 1 })
            .optional()
            .describe("The caller or a bot of theirs, as the sender of the mail's messages"),
        },
      },
      async ({ user, path, params }) => ({
        email: await channelEmailAddress(db, user, path.stream_id, params.sender_id),
      }),
    ),

    updateStream: userEndpoint(
      {
        pathParams: ["stream_id"],
        operationId: "update-stream",
        summary: "Update a channel",
        tag: "channels",
        params: {
          description: str({ maxLength: MAX_CHANNEL_DESCRIPTION_LENGTH }).optional(),
          new_name: str().optional(),
          is_private: bool().optional(),
          is_web_public: bool().optional(),
          history_public_to_subscribers: bool().optional(),
          is_default_stream: bool().optional(),
          message_retention_days: str().optional(),
          folder_id: json(z.int32().nullable()).optional(),
          topics_policy: oneOf([
            "inherit",
            "allow_empty_topic",
            "disable_empty_topic",
            "empty_topic_only",
          ]).optional(),
          ...Object.fromEntries(
            CHANNEL_GROUP_SETTINGS.map((name) => [name, groupSettingUpdateParam().optional()]),
          ),
        },
      },
      async ({ user, path, params }) => {
        const groups = Object.fromEntries(
          CHANNEL_GROUP_SETTINGS.flatMap((name) => {
            const change = (params as Record<string, unknown>)[name];
            return change === undefined ? [] : [[name, change]];
          }),
        ) as ChannelUpdate["groups"];
        await doUpdateChannel(
          db,
          user,
          path.stream_id,
          {
            newName: params.new_name,
            description: params.description,
            isPrivate: params.is_private,
            isWebPublic: params.is_web_public,
            historyPublicToSubscribers: params.history_public_to_subscribers,
            isDefaultStream: params.is_default_stream,
            messageRetentionDays: params.message_retention_days,
            folderId: params.folder_id,
            topicsPolicy: params.topics_policy,
            groups,
          },
          { webPublicStreamsEnabled: config.CHAT_WEB_PUBLIC_STREAMS_ENABLED },
        );
        return {};
      },
    ),
    addDefaultStream: defaultStreamEndpoint("add-default-stream", "Add a default channel", true),
    removeDefaultStream: defaultStreamEndpoint(
      "remove-default-stream",
      "Remove a default channel",
      false,
    ),
    archiveStream: userEndpoint(
      {
        pathParams: ["stream_id"],
        operationId: "archive-stream",
        summary: "Archive a channel",
        tag: "channels",
        params: {},
      },
      async ({ user, path }) => {
        await doArchiveChannel(db, user, path.stream_id);
        return {};
      },
    ),
    deleteTopic: userEndpoint(
      {
        pathParams: ["stream_id"],
        operationId: "delete-topic",
        summary: "Delete a topic",
        tag: "channels",
        access: { role: "administrator" },
        params: { topic_name: str({ ownNulCheck: true }) },
      },
      async ({ user, path, params }) =>
        doDeleteTopic(
          db,
          user,
          path.stream_id,
          params.topic_name,
          config.CHAT_DELETE_TOPIC_BUDGET_MS,
        ),
    ),
    getStreamId: userEndpoint(
      {
        operationId: "get-stream-id",
        summary: "Get channel ID",
        tag: "channels",
        params: { stream: str().describe("The channel's name") },
      },
      async ({ user, params }) => ({ stream_id: await channelIdOf(db, user, params.stream) }),
    ),
    getSubscribers: userEndpoint(
      {
        pathParams: ["stream_id"],
        operationId: "get-subscribers",
        summary: "Get channel subscribers",
        tag: "channels",
        params: {},
      },
      async ({ user, path }) => ({
        subscribers: await channelSubscribers(db, user, path.stream_id),
      }),
    ),
  };
}
