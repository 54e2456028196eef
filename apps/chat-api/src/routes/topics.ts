import { channelTopicList } from "../actions/channel-lookups";
import { bool } from "../lib/params";
import { userEndpoint } from "../lib/typed-endpoint";
import type { Services } from "../services";

/** `/users/me/{stream_id}/topics`: a channel's topics, as the topic list of a client shows them. */
export function topicRoutes({ db }: Services) {
  return {
    getStreamTopics: userEndpoint(
      {
        pathParams: ["stream_id"],
        operationId: "get-stream-topics",
        summary: "Get topics in a channel",
        tag: "channels",
        params: { allow_empty_topic_name: bool().default(false) },
      },
      async ({ user, path, params }) => ({
        topics: await channelTopicList(db, user, path.stream_id, params.allow_empty_topic_name),
      }),
    ),
  };
}
