import { type EmojiRef, type ReactionType, doReact } from "../actions/reactions";
import { oneOf, str } from "../http/params";
import { userEndpoint } from "../http/typed-endpoint";
import type { Services } from "../http/context";

/** The emoji of a reaction request. */
const reactionParams = {
  emoji_name: str({ maxLength: 100 }),
  emoji_code: str({ maxLength: 100 }).optional(),
  reaction_type: oneOf(["unicode_emoji", "realm_emoji", "zulip_extra_emoji"]).optional(),
};

/** The emoji a reaction request names, as the action takes it. */
function emojiRef(params: {
  emoji_name?: string | undefined;
  emoji_code?: string | undefined;
  reaction_type?: ReactionType | undefined;
}): EmojiRef {
  return {
    emojiName: params.emoji_name,
    emojiCode: params.emoji_code,
    reactionType: params.reaction_type,
  };
}

/** Emoji reactions to messages. */
export function reactionRoutes({ db }: Services) {
  return {
    addReaction: userEndpoint(
      {
        pathParams: ["message_id"],
        operationId: "add-reaction",
        summary: "Add an emoji reaction",
        tag: "messages",
        params: reactionParams,
      },
      async ({ user, path, params }) => {
        await doReact(db, user, path.message_id, emojiRef(params), "add");
        return {};
      },
    ),
    removeReaction: userEndpoint(
      {
        pathParams: ["message_id"],
        operationId: "remove-reaction",
        summary: "Remove an emoji reaction",
        tag: "messages",
        params: {
          ...reactionParams,
          emoji_name: str({ maxLength: 100 }).optional(),
        },
      },
      async ({ user, path, params }) => {
        await doReact(db, user, path.message_id, emojiRef(params), "remove");
        return {};
      },
    ),
  };
}
