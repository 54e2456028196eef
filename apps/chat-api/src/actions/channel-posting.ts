import type { Tx } from "../db/kysely";
import { ErrorCode, JsonableError } from "@repo/envelope";
import type { Channel } from "../gen/prisma/client";
import type { AuthedUser } from "../caches/auth";
import { isGuest } from "../lib/roles";
import { canSee } from "./channels";
import { channelPosting } from "../db/queries/channels";

/**
 * The channel a user may post to, by id or name, with Zulip's messages, in
 * one statement. With `topic` (a send), also the channel's topics policy and
 * the permission to start a topic; without (a move), the caller checks them.
 */
export async function channelToPostTo(
  db: Tx,
  user: AuthedUser,
  to: number | string,
  topic: string | null,
): Promise<Channel> {
  const found = await channelPosting(db, user.realm_id, user.id, to, topic ?? "");
  // A channel the sender may not see is answered as one that does not exist.
  if (found === undefined || !(await canSee(user, found, () => Promise.resolve(found.subscribed))))
    throw channelMissing(to, topic !== null);
  const { subscribed, may_send, may_start_topic, topic_exists, ...channel } = found;
  const reachable =
    subscribed || channel.is_web_public || (!channel.invite_only && !isGuest(user.role));
  if (channel.is_archived || !reachable)
    throw new JsonableError(`Not authorized to send to channel '${channel.name}'`);
  if (!may_send) throw new JsonableError("You do not have permission to post in this channel.");
  if (topic !== null) {
    checkTopicPolicy(channel, topic);
    if (!topic_exists && !may_start_topic)
      throw new JsonableError("You do not have permission to create new topics in this channel.");
  }
  return channel;
}

/**
 * The answer for a channel that does not exist (or that the user may not
 * see). A send answers Zulip's `STREAM_DOES_NOT_EXIST` with the channel it
 * named (`stream_id` or `stream`); a move, the same message as BAD_REQUEST.
 */
function channelMissing(to: number | string, send: boolean): JsonableError {
  const msg =
    typeof to === "number"
      ? `Channel with ID '${String(to)}' does not exist`
      : `Channel '${to}' does not exist`;
  if (!send) return new JsonableError(msg);
  return new JsonableError(
    msg,
    ErrorCode.STREAM_DOES_NOT_EXIST,
    400,
    typeof to === "number" ? { stream_id: to } : { stream: to },
  );
}

/** Refuses a topic the channel's topics policy does not allow (a send, or a move into it). */
export function checkTopicPolicy(channel: Pick<Channel, "topics_policy">, topic: string): void {
  if (channel.topics_policy === "disable_empty_topic" && topic === "")
    throw new JsonableError("Sending messages to the general chat is not allowed in this channel.");
  if (channel.topics_policy === "empty_topic_only" && topic !== "")
    throw new JsonableError("Only the general chat topic is allowed in this channel.");
}
