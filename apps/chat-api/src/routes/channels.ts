import { JsonableError } from "@repo/envelope";
import {
  accessChannelById,
  accessChannelByName,
  doArchiveChannel,
  doMuteTopic,
  doUnmuteTopic,
  listChannels,
} from "../actions/channels";
import { channelViews, subscriptionViews } from "../actions/channel-view";
import { doSubscribe } from "../actions/subscriptions";
import { z } from "zod";
import { type NewChannel, doCreateChannel, parseRetentionDays } from "../actions/create-channel";
import {
  CHANNEL_GROUP_SETTINGS,
  MAX_CHANNEL_DESCRIPTION_LENGTH,
  MAX_TOPIC_LENGTH,
} from "../actions/channel-settings";
import { groupSettingParam } from "../lib/group-setting";
import { type ParamValues, bool, int, json, oneOf, str } from "../lib/params";
import type { Api } from "../lib/typed-endpoint";
import type { Services } from "../services";

/** The options of a new channel, shared by POST /channels/create and POST /users/me/subscriptions. */
const channelOptionParams = {
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
function channelOptions(
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
export function channelRoutes(api: Api, { db, config }: Services): void {
  const creation = { webPublicStreamsEnabled: config.CHAT_WEB_PUBLIC_STREAMS_ENABLED };

  api.user(
    "POST",
    "/channels/create",
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
        db.prisma,
        user,
        { name, description, subscribers, ...channelOptions(params) },
        creation,
      );
      return { id };
    },
  );

  api.user(
    "GET",
    "/streams",
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
      const channels = await listChannels(db.prisma, user, {
        includePublic: params.include_public,
        includeWebPublic: params.include_web_public,
        includeSubscribed: params.include_subscribed,
        excludeArchived: params.exclude_archived,
        includeAll: params.include_all || params.include_all_active,
        includeDefault: params.include_default,
        includeOwnerSubscribed: params.include_owner_subscribed,
        includeCanAccessContent: params.include_can_access_content,
      });
      const views = await channelViews(db.prisma, channels);
      return {
        streams: params.include_default
          ? views.map((view, i) => ({ ...view, is_default: channels[i]?.is_default_stream }))
          : views,
      };
    },
  );

  api.user(
    "GET",
    "/streams/{stream_id}",
    {
      operationId: "get-stream-by-id",
      summary: "Get a channel by ID",
      tag: "channels",
      params: {},
    },
    async ({ user, path }) => {
      const channel = await accessChannelById(db.prisma, user, path.stream_id);
      const [stream] = await channelViews(db.prisma, [channel]);
      return { stream };
    },
  );

  api.user(
    "GET",
    "/users/me/subscriptions",
    {
      operationId: "get-subscriptions",
      summary: "Get subscribed channels",
      tag: "channels",
      params: { include_subscribers: bool().default(false) },
    },
    async ({ user, params }) => {
      const subscriptions = await db.prisma.subscription.findMany({
        where: { user_id: user.id, active: true, channel: { is_archived: false } },
        include: { channel: true },
        orderBy: { channel: { name: "asc" } },
      });
      return {
        subscriptions: await subscriptionViews(
          db.prisma,
          subscriptions,
          params.include_subscribers,
        ),
      };
    },
  );

  api.user(
    "POST",
    "/users/me/subscriptions",
    {
      operationId: "subscribe",
      summary: "Subscribe to a channel",
      tag: "channels",
      params: {
        subscriptions: json(
          z.array(
            z
              .object({
                name: z.string(),
                description: z.string().max(MAX_CHANNEL_DESCRIPTION_LENGTH).default(""),
              })
              .strict(),
          ),
        ),
        principals: json(z.union([z.array(z.int32()), z.array(z.string())])).optional(),
        authorization_errors_fatal: bool().default(true),
        ...channelOptionParams,
      },
    },
    async ({ user, params }) =>
      doSubscribe(
        db.prisma,
        user,
        {
          channels: params.subscriptions,
          principals: params.principals,
          authorizationErrorsFatal: params.authorization_errors_fatal,
          creation: channelOptions(params),
        },
        creation,
      ),
  );

  api.user(
    "DELETE",
    "/streams/{stream_id}",
    { operationId: "archive-stream", summary: "Archive a channel", tag: "channels", params: {} },
    async ({ user, path }) => {
      await doArchiveChannel(db.prisma, user, path.stream_id);
      return {};
    },
  );

  api.user(
    "PATCH",
    "/users/me/subscriptions/muted_topics",
    {
      operationId: "mute-topic",
      summary: "Topic muting",
      tag: "channels",
      deprecated: true,
      params: {
        stream_id: int({ min: 0 }).optional().describe("Channel ID (one of stream_id or stream)"),
        stream: str().optional().describe("Channel name; prefer stream_id"),
        topic: str({ maxLength: MAX_TOPIC_LENGTH }),
        op: oneOf(["add", "remove"]),
      },
    },
    async ({ user, params }) => {
      const { stream_id: streamId, stream, topic, op } = params;
      if (streamId !== undefined && stream !== undefined) {
        throw new JsonableError(
          "Unsupported parameter combination: stream_id, stream",
          "BAD_REQUEST",
          400,
          {
            parameters: "stream_id, stream",
          },
        );
      }
      if (streamId === undefined && stream === undefined)
        throw new JsonableError("Missing 'stream_id' argument");
      const access = () =>
        streamId === undefined
          ? accessChannelByName(db.prisma, user, stream ?? "")
          : accessChannelById(db.prisma, user, streamId);
      if (op === "add") {
        await doMuteTopic(db.prisma, user.id, (await access()).id, topic);
        return {};
      }
      // Unmuting where the channel cannot be reached is Zulip's "Topic is not muted".
      const channel = await access().catch(() => {
        throw new JsonableError("Topic is not muted");
      });
      await doUnmuteTopic(db.prisma, user.id, channel.id, topic);
      return {};
    },
  );
}
