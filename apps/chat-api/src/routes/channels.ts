import { JsonableError } from "@repo/envelope";
import {
  accessChannelById,
  accessChannelByName,
  doArchiveChannel,
  doMuteTopic,
  doUnmuteTopic,
} from "../actions/channels";
import { int, oneOf, str } from "../lib/params";
import type { Api } from "../lib/typed-endpoint";
import type { Services } from "../services";

/** `max_topic_length` of this server. */
const MAX_TOPIC_LENGTH = 60;

/** Channel and topic operations. */
export function channelRoutes(api: Api, { db }: Services): void {
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
