import { isBotOf, isRealmUser } from "../db/queries/users";
import type { Database } from "../db/database";
import { JsonableError } from "@repo/envelope";
import { channelSubscriberIds, channelTopics, isSubscribed } from "../db/queries/channels";
import type { AuthedUser } from "../lib/auth";
import { isAdministrator } from "../lib/roles";
import { accessChannelById, accessChannelByName } from "./channels";

/**
 * Zulip's display name of the empty topic ("general chat"), sent in its place
 * to clients that do not declare `empty_topic_name` support.
 */
export const EMPTY_TOPIC_DISPLAY_NAME = "general chat";

/** GET /get_stream_id: the id of the channel named `name` that the caller can see. */
export async function channelIdOf(db: Database, user: AuthedUser, name: string): Promise<number> {
  return (await accessChannelByName(db, user, name)).id;
}

/** GET /streams/{stream_id}/members: the active subscribers of a channel the caller can see. */
export async function channelSubscribers(
  db: Database,
  user: AuthedUser,
  channelId: number,
): Promise<number[]> {
  const channel = await accessChannelById(db, user, channelId);
  return channelSubscriberIds(db, channel.id);
}

/**
 * GET /users/me/{stream_id}/topics: the channel's topics, newest first, each
 * with its newest message's id. A channel whose history is not shared with
 * new subscribers shows its subscribers the topics of messages they received
 * (administrators who are not subscribed see them all, as Zulip's do).
 */
export async function channelTopicList(
  db: Database,
  user: AuthedUser,
  channelId: number,
  allowEmptyTopicName: boolean,
): Promise<{ name: string; max_id: number }[]> {
  const channel = await accessChannelById(db, user, channelId);
  const restricted = channel.invite_only && !channel.history_public_to_subscribers;
  const topics = await channelTopics(
    db,
    channel.id,
    restricted && !isAdministrator(user.role) ? user.id : null,
  );
  return allowEmptyTopicName
    ? topics
    : topics.map((t) => (t.name === "" ? { ...t, name: EMPTY_TOPIC_DISPLAY_NAME } : t));
}

/**
 * GET /users/{user_id}/subscriptions/{stream_id}: whether a user of the
 * caller's realm is subscribed to a channel the caller can see.
 */
export async function isUserSubscribed(
  db: Database,
  viewer: AuthedUser,
  userId: number,
  channelId: number,
): Promise<boolean> {
  if (!(await isRealmUser(db, viewer.realm_id, userId))) throw new JsonableError("No such user");
  const channel = await accessChannelById(db, viewer, channelId);
  return isSubscribed(db, userId, channel.id);
}

/**
 * GET /streams/{stream_id}/email_address: the address that posts to a
 * channel the caller can see, as `sender` (the caller, or a bot of theirs).
 * This server has no email gateway, so it is "", as Zulip answers when its
 * EMAIL_GATEWAY_PATTERN is empty.
 */
export async function channelEmailAddress(
  db: Database,
  user: AuthedUser,
  channelId: number,
  senderId: number | undefined,
): Promise<string> {
  await accessChannelById(db, user, channelId);
  if (senderId !== undefined && senderId !== user.id) {
    if (!(await isBotOf(db, user.realm_id, senderId, user.id)))
      throw new JsonableError("Invalid user ID");
  }
  return "";
}
