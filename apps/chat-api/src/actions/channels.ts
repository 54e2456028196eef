import { isRealmUser, lockUser } from "../db/queries/users";
import { botOwnerId, isBotOf } from "../db/queries/bots";
import type { Database } from "../db/database";
import { JsonableError } from "@repo/envelope";
import {
  archiveChannel,
  channelById,
  channelIdByName,
  channelsOf,
  channelTopics,
  channelViewerIds,
  channelVisibility,
  hasLiveWebPublicChannel,
} from "../db/queries/channels";
import {
  clearTopicPolicy,
  setTopicPolicy,
  topicPolicyCount,
  topicPolicyExists,
} from "../db/queries/topic-policies";
import {
  channelSubscriberIds,
  isSubscribed,
  subscribedChannelIds,
} from "../db/queries/subscriptions";
import type { AuthedUser } from "../caches/auth";
import { isAdministrator, isGuest } from "../lib/roles";
import type { Tx } from "../db/kysely";
import type { Channel } from "../gen/prisma/client";
import type { ChatEvent } from "../realtime/event";
import { sendEvent } from "../realtime/queue";
import { checkCap } from "./caps";

/** What deciding whether a user sees a channel reads of it. */
type Visibility = Pick<Channel, "realm_id" | "is_web_public" | "invite_only">;

/**
 * Whether `user` can see `channel` (its metadata): administrators see every
 * channel of their realm, members every public one, everyone the channels they
 * are subscribed to and web-public ones. `subscribed` is asked only when it matters.
 */
export async function canSee(
  user: AuthedUser,
  channel: Visibility,
  subscribed: () => Promise<boolean>,
): Promise<boolean> {
  if (channel.realm_id !== user.realm_id) return false;
  if (isAdministrator(user.role) || channel.is_web_public) return true;
  if (!channel.invite_only && !isGuest(user.role)) return true;
  return subscribed();
}

/**
 * {@link accessChannelById} for callers that need no more than the answer (a
 * draft's channel), in one statement: the channel's visibility columns and
 * the caller's subscription together.
 */
export async function checkChannelVisible(
  tx: Tx,
  user: AuthedUser,
  channelId: number,
): Promise<void> {
  const row = await channelVisibility(tx, channelId, user.id);
  if (
    row === undefined ||
    !(await canSee(user, row, () => Promise.resolve(row.subscribed === true)))
  )
    throw new JsonableError("Invalid channel ID");
}

/** A channel of the caller's realm the caller can see, by id; else `Invalid channel ID` (all cases look the same). */
export async function accessChannelById(
  db: Database,
  user: AuthedUser,
  channelId: number,
): Promise<Channel> {
  const channel = await channelById(db, channelId);
  if (
    channel === null ||
    !(await canSee(user, channel, () => isSubscribed(db, user.id, channelId)))
  )
    throw new JsonableError("Invalid channel ID");
  return channel;
}

/** The channel of realm `realmId` named `name`, compared case-insensitively as Zulip does, or null. */
export async function channelByName(
  tx: Tx,
  realmId: number,
  name: string,
): Promise<Channel | null> {
  const id = await channelIdByName(tx, realmId, name);
  return id === undefined ? null : channelById(tx, id);
}

/** The same by name (compared case-insensitively); else `Invalid channel name 'NAME'`. */
export async function accessChannelByName(
  db: Database,
  user: AuthedUser,
  name: string,
): Promise<Channel> {
  const channel = await channelByName(db, user.realm_id, name);
  if (
    channel === null ||
    !(await canSee(user, channel, () => isSubscribed(db, user.id, channel.id)))
  ) {
    throw new JsonableError(`Invalid channel name '${name}'`);
  }
  return channel;
}

/**
 * Archives a channel: administrators only, after the caller was shown to see
 * it. The channel keeps its messages and subscriptions; it stops being a
 * default channel.
 */
export async function doArchiveChannel(
  db: Database,
  user: AuthedUser,
  channelId: number,
): Promise<void> {
  const channel = await accessChannelById(db, user, channelId);
  if (!isAdministrator(user.role))
    throw new JsonableError("You do not have permission to administer this channel.");
  if (channel.is_archived) throw new JsonableError("Channel is already deactivated");
  await db.transaction(async (tx) => {
    await archiveChannel(tx, channel.id);
    await sendEvent(tx, await channelViewerIds(tx, channel), {
      type: "stream",
      op: "delete",
      streams: [{ stream_id: channel.id }],
      stream_ids: [channel.id],
    });
  });
}

/** Visibility policies as Zulip numbers them: 0 none (inherit), 1 muted. */
const INHERIT = 0;
const MUTED = 1;

/** Mutes a topic (idempotent, feature level 169) and tells the user's clients (`user_topic`). */
export async function doMuteTopic(
  db: Database,
  userId: number,
  channelId: number,
  topic: string,
  cap: number,
): Promise<void> {
  await db.transaction(async (tx) => {
    await checkTopicPolicyCap(tx, userId, channelId, topic, cap);
    await setTopicPolicy(tx, userId, channelId, topic, MUTED);
    await sendEvent(tx, [userId], userTopicEvent(channelId, topic, MUTED));
  });
}

/** Unmutes a topic (idempotent, feature level 169) and tells the user's clients (`user_topic`). */
export async function doUnmuteTopic(
  db: Database,
  userId: number,
  channelId: number,
  topic: string,
): Promise<void> {
  await db.transaction(async (tx) => {
    await clearTopicPolicy(tx, userId, channelId, topic, MUTED);
    await sendEvent(tx, [userId], userTopicEvent(channelId, topic, INHERIT));
  });
}

/**
 * POST /user_topics: sets the caller's visibility policy of a topic in a
 * channel they can see (0 none, 1 muted, 2 unmuted, 3 followed; any case of
 * the topic's name is the same topic), and tells their clients (`user_topic`).
 */
export async function doSetTopicVisibility(
  db: Database,
  user: AuthedUser,
  channelId: number,
  topic: string,
  policy: number,
  cap: number,
): Promise<void> {
  const channel = await accessChannelById(db, user, channelId);
  await db.transaction(async (tx) => {
    if (policy === INHERIT) await clearTopicPolicy(tx, user.id, channel.id, topic, undefined);
    else {
      await checkTopicPolicyCap(tx, user.id, channel.id, topic, cap);
      await setTopicPolicy(tx, user.id, channel.id, topic, policy);
    }
    await sendEvent(tx, [user.id], userTopicEvent(channel.id, topic, policy));
  });
}

/**
 * Refuses a policy for one more topic past `cap` (CHAT_MAX_OBJECTS_PER_USER);
 * changing the policy of a topic that has one is always allowed. The user's
 * row lock makes concurrent requests count one after the other.
 */
async function checkTopicPolicyCap(
  tx: Tx,
  userId: number,
  channelId: number,
  topic: string,
  cap: number,
): Promise<void> {
  await lockUser(tx, userId);
  if (await topicPolicyExists(tx, userId, channelId, topic)) return;
  const held = await topicPolicyCount(tx, userId);
  checkCap(held, 1, cap, "topic settings");
}

function userTopicEvent(channelId: number, topic: string, policy: number): ChatEvent {
  return {
    type: "user_topic",
    stream_id: channelId,
    topic_name: topic,
    last_updated: Math.floor(Date.now() / 1000),
    visibility_policy: policy,
  };
}

/** Which channels GET /streams returns (Zulip's parameters, defaults applied). */
export interface ChannelQuery {
  includePublic: boolean;
  includeWebPublic: boolean;
  includeSubscribed: boolean;
  excludeArchived: boolean;
  includeAll: boolean;
  includeDefault: boolean;
  includeOwnerSubscribed: boolean;
  includeCanAccessContent: boolean;
}

/**
 * The channels of the caller's realm that `query` selects, by name: the
 * union of the requested kinds, each limited to what the caller may see
 * (guests never get public channels they are not subscribed to).
 */
export async function listChannels(
  db: Database,
  user: AuthedUser,
  query: ChannelQuery,
): Promise<Channel[]> {
  const [channels, subscribed, ownerSubscribed] = await Promise.all([
    channelsOf(db, user.realm_id, query.excludeArchived),
    subscribedChannelIds(db, user.id),
    query.includeOwnerSubscribed && user.is_bot
      ? botOwnerId(db, user.id).then((owner) =>
          owner === null ? new Set<number>() : subscribedChannelIds(db, owner),
        )
      : new Set<number>(),
  ]);
  const guest = isGuest(user.role);
  const contentAccess = (c: Channel) =>
    subscribed.has(c.id) || c.is_web_public || (!c.invite_only && !guest);
  const selected = channels.filter(
    (c) =>
      (query.includeAll && (isAdministrator(user.role) || contentAccess(c))) ||
      (query.includePublic && !c.invite_only && !guest) ||
      (query.includeWebPublic && c.is_web_public) ||
      (query.includeSubscribed && subscribed.has(c.id)) ||
      (query.includeDefault && c.is_default_stream && !guest) ||
      (query.includeCanAccessContent && contentAccess(c)) ||
      ownerSubscribed.has(c.id),
  );
  return selected.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : a.id - b.id));
}

/** Whether the realm has a live web-public channel (`realm_web_public_access_enabled`). */
export function hasWebPublicChannels(db: Database, realmId: number): Promise<boolean> {
  return hasLiveWebPublicChannel(db, realmId);
}

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
export async function subscriptionStatusOf(
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
