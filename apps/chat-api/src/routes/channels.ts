import { JsonableError } from "@repo/envelope";
import {
  accessChannelById,
  accessChannelByName,
  doArchiveChannel,
  doMuteTopic,
  doUnmuteTopic,
} from "../actions/channels";
import { z } from "zod";
import {
  CHANNEL_GROUP_SETTINGS,
  MAX_CHANNEL_DESCRIPTION_LENGTH,
  doCreateChannel,
  parseRetentionDays,
} from "../actions/create-channel";
import { groupSettingParam } from "../lib/group-setting";
import { bool, int, json, oneOf, str } from "../lib/params";
import type { Api } from "../lib/typed-endpoint";
import type { Services } from "../services";

/** `max_topic_length` of this server. */
const MAX_TOPIC_LENGTH = 60;

/** Channel and topic operations. */
export function channelRoutes(api: Api, { db, config }: Services): void {
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
        subscribers: json(z.array(z.int())),
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
      },
    },
    async ({ user, params }) => {
      const {
        name,
        description,
        subscribers,
        announce,
        folder_id: folderId,
        topics_policy: topicsPolicy,
      } = params;
      const id = await doCreateChannel(
        db.prisma,
        user,
        {
          name,
          description,
          subscribers,
          announce,
          inviteOnly: params.invite_only,
          isWebPublic: params.is_web_public,
          isDefaultStream: params.is_default_stream,
          folderId,
          topicsPolicy,
          historyPublicToSubscribers: params.history_public_to_subscribers,
          messageRetentionDays:
            params.message_retention_days === undefined
              ? null
              : parseRetentionDays(params.message_retention_days),
          settings: Object.fromEntries(CHANNEL_GROUP_SETTINGS.map((name) => [name, params[name]])),
        },
        { webPublicStreamsEnabled: config.CHAT_WEB_PUBLIC_STREAMS_ENABLED },
      );
      return { id };
    },
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
