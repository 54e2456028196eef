import { JsonableError } from "@repo/envelope";
import {
  accessChannelById,
  accessChannelByName,
  doMuteTopic,
  doUnmuteTopic,
} from "../actions/channels";
import { listSubscriptions } from "../actions/channel-view";
import {
  doSetSubscriptionProperties,
  doSubscribe,
  doUnsubscribe,
  doUpdateSubscriptions,
} from "../actions/subscriptions";
import { z } from "zod";
import {
  MAX_CHANNEL_DESCRIPTION_LENGTH,
  MAX_CHANNEL_NAME_LENGTH,
  MAX_TOPIC_LENGTH,
} from "../actions/channel-settings";
import { bool, int, json, oneOf, str } from "../http/params";
import { userEndpoint } from "../http/typed-endpoint";
import type { Services } from "../http/context";
import { channelOptionParams, channelOptions } from "./channels";

/** The caller's channel subscriptions, and the deprecated topic muting under them. */
export function subscriptionRoutes({ db, config }: Services) {
  const creation = { webPublicStreamsEnabled: config.CHAT_WEB_PUBLIC_STREAMS_ENABLED };
  return {
    getSubscriptions: userEndpoint(
      {
        operationId: "get-subscriptions",
        summary: "Get subscribed channels",
        tag: "channels",
        params: { include_subscribers: bool().default(false) },
      },
      async ({ user, params }) => ({
        subscriptions: await listSubscriptions(db, user.id, params.include_subscribers),
      }),
    ),
    subscribe: userEndpoint(
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
          db,
          user,
          {
            channels: params.subscriptions,
            principals: params.principals,
            authorizationErrorsFatal: params.authorization_errors_fatal,
            creation: channelOptions(params),
          },
          creation,
        ),
    ),
    updateSubscriptions: userEndpoint(
      {
        operationId: "update-subscriptions",
        summary: "Update subscriptions",
        tag: "channels",
        params: {
          add: json(
            z
              .array(
                z
                  .object({
                    name: z.string(),
                    description: z.string().max(MAX_CHANNEL_DESCRIPTION_LENGTH).default(""),
                  })
                  .strict(),
              )
              .max(500),
          ).default([]),
          delete: json(z.array(z.string().max(MAX_CHANNEL_NAME_LENGTH)).max(500)).default([]),
          ...channelOptionParams,
        },
      },
      async ({ user, params }) =>
        doUpdateSubscriptions(
          db,
          user,
          {
            channels: params.add,
            principals: undefined,
            authorizationErrorsFatal: true,
            creation: channelOptions(params),
          },
          params.delete,
          creation,
        ),
    ),
    unsubscribe: userEndpoint(
      {
        operationId: "unsubscribe",
        summary: "Unsubscribe from a channel",
        tag: "channels",
        params: {
          subscriptions: json(z.array(z.string().max(MAX_CHANNEL_NAME_LENGTH)).min(1).max(500)),
          principals: json(z.union([z.array(z.int32()), z.array(z.string())])).optional(),
        },
      },
      async ({ user, params }) => doUnsubscribe(db, user, params.subscriptions, params.principals),
    ),
    setProperties: userEndpoint(
      {
        operationId: "update-subscription-settings",
        summary: "Update subscription settings",
        tag: "channels",
        params: {
          subscription_data: json(
            z
              .array(
                z
                  .object({
                    stream_id: z.int32(),
                    property: z.string().max(100),
                    value: z.union([z.boolean(), z.string().max(100)]),
                  })
                  .strict(),
              )
              .max(500),
          ),
        },
      },
      async ({ user, params }) => {
        await doSetSubscriptionProperties(db, user, params.subscription_data);
        return {};
      },
    ),
    muteTopic: userEndpoint(
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
            ? accessChannelByName(db, user, stream ?? "")
            : accessChannelById(db, user, streamId);
        if (op === "add") {
          await doMuteTopic(
            db,
            user.id,
            (await access()).id,
            topic,
            config.CHAT_MAX_OBJECTS_PER_USER,
          );
          return {};
        }
        // Unmuting where the channel cannot be reached is Zulip's "Topic is not muted".
        const channel = await access().catch(() => {
          throw new JsonableError("Topic is not muted");
        });
        await doUnmuteTopic(db, user.id, channel.id, topic);
        return {};
      },
    ),
  };
}
