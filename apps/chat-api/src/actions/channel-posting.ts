import type { Tx } from "../db/kysely";
import { JsonableError } from "@repo/envelope";
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
    throw new JsonableError(
      typeof to === "number"
        ? `Channel with ID '${String(to)}' does not exist`
        : `Channel '${to}' does not exist`,
    );
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

/** Refuses a topic the channel's topics policy does not allow (a send, or a move into it). */
export function checkTopicPolicy(channel: Pick<Channel, "topics_policy">, topic: string): void {
  if (channel.topics_policy === "disable_empty_topic" && topic === "")
    throw new JsonableError("Sending messages to the general chat is not allowed in this channel.");
  if (channel.topics_policy === "empty_topic_only" && topic !== "")
    throw new JsonableError("Only the general chat topic is allowed in this channel.");
}
