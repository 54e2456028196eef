import { channelTopicList, doSetTopicVisibility } from "../actions/channels";
import { MAX_TOPIC_LENGTH } from "../actions/channel-settings";
import { bool, int, str } from "../http/params";
import { userEndpoint } from "../http/typed-endpoint";
import type { Services } from "../http/context";

/** A channel's topics as a client's topic list shows them, and the caller's policy of each. */
export function topicRoutes({ db, config }: Services) {
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
    setTopicVisibility: userEndpoint(
      {
        operationId: "update-user-topic",
        summary: "Update personal preferences for a topic",
        tag: "channels",
        params: {
          stream_id: int({ min: 1 }),
          topic: str({ maxLength: MAX_TOPIC_LENGTH }),
          visibility_policy: int({ min: 0, max: 3 }),
        },
      },
      async ({ user, params }) => {
        await doSetTopicVisibility(
          db,
          user,
          params.stream_id,
          params.topic.trim(),
          params.visibility_policy,
          config.CHAT_MAX_OBJECTS_PER_USER,
        );
        return {};
      },
    ),
  };
}
