import { JsonableError } from "@repo/envelope";
import type { Channel, Prisma, PrismaClient } from "../gen/prisma/client";
import { type ChatEvent, sendEvent } from "../events/queue";
import type { SqlSession } from "../db/sql";
import { CHANNEL_VISIBILITY } from "../db/statements";
import type { AuthedUser } from "../lib/auth";
import { Role, isAdministrator, isGuest } from "../lib/roles";
import { txOf } from "../db/kysely";
import { channelIdByName, clearTopicPolicy, setTopicPolicy } from "../db/queries/channels";

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

/** Whether `user` is an active subscriber of channel `channelId`. */
async function isSubscribed(prisma: PrismaClient, user: AuthedUser, channelId: number) {
  const subscription = await prisma.subscription.findUnique({
    where: { user_id_channel_id: { user_id: user.id, channel_id: channelId } },
  });
  return subscription?.active === true;
}

/**
 * {@link accessChannelById} for callers that need no more than the answer (a
 * draft's channel), in one raw statement: the channel's visibility columns and
 * the caller's subscription together.
 */
export async function checkChannelVisible(
  sql: SqlSession,
  user: AuthedUser,
  channelId: number,
): Promise<void> {
  const [row] = await sql.query<Visibility & { subscribed: boolean | null }>(CHANNEL_VISIBILITY, [
    channelId,
    user.id,
  ]);
  if (
    row === undefined ||
    !(await canSee(user, row, () => Promise.resolve(row.subscribed === true)))
  )
    throw new JsonableError("Invalid channel ID");
}

/** A channel of the caller's realm the caller can see, by id; else `Invalid channel ID` (all cases look the same). */
export async function accessChannelById(
  prisma: PrismaClient,
  user: AuthedUser,
  channelId: number,
): Promise<Channel> {
  const channel = await prisma.channel.findUnique({ where: { id: channelId } });
  if (
    channel === null ||
    !(await canSee(user, channel, () => isSubscribed(prisma, user, channelId)))
  )
    throw new JsonableError("Invalid channel ID");
  return channel;
}

/** The channel of realm `realmId` named `name`, compared case-insensitively as Zulip does, or null. */
export async function channelByName(
  tx: Prisma.TransactionClient,
  realmId: number,
  name: string,
): Promise<Channel | null> {
  const id = await channelIdByName(txOf(tx), realmId, name);
  return id === undefined ? null : tx.channel.findUnique({ where: { id } });
}

/** The same by name (compared case-insensitively); else `Invalid channel name 'NAME'`. */
export async function accessChannelByName(
  prisma: PrismaClient,
  user: AuthedUser,
  name: string,
): Promise<Channel> {
  const channel = await channelByName(prisma, user.realm_id, name);
  if (
    channel === null ||
    !(await canSee(user, channel, () => isSubscribed(prisma, user, channel.id)))
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
  prisma: PrismaClient,
  user: AuthedUser,
  channelId: number,
): Promise<void> {
  const channel = await accessChannelById(prisma, user, channelId);
  if (!isAdministrator(user.role))
    throw new JsonableError("You do not have permission to administer this channel.");
  if (channel.is_archived) throw new JsonableError("Channel is already deactivated");
  await prisma.$transaction(async (tx) => {
    await tx.channel.update({
      where: { id: channel.id },
      data: { is_archived: true, is_default_stream: false },
    });
    await sendEvent(tx, await channelAudience(tx, channel), {
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
  prisma: PrismaClient,
  userId: number,
  channelId: number,
  topic: string,
): Promise<void> {
  await prisma.$transaction(async (tx) => {
    await setTopicPolicy(txOf(tx), userId, channelId, topic, MUTED);
    await sendEvent(tx, [userId], userTopicEvent(channelId, topic, MUTED));
  });
}

/** Unmutes a topic (idempotent, feature level 169) and tells the user's clients (`user_topic`). */
export async function doUnmuteTopic(
  prisma: PrismaClient,
  userId: number,
  channelId: number,
  topic: string,
): Promise<void> {
  await prisma.$transaction(async (tx) => {
    await clearTopicPolicy(txOf(tx), userId, channelId, topic, MUTED);
    await sendEvent(tx, [userId], userTopicEvent(channelId, topic, INHERIT));
  });
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

/**
 * Who hears about a channel's creation or archiving: those who can see it.
 * For a public channel, every active member (guests only when subscribed);
 * for a private one, its subscribers and the realm's administrators.
 */
export async function channelAudience(
  tx: Prisma.TransactionClient,
  channel: Channel,
): Promise<number[]> {
  const subscribed = { subscriptions: { some: { channel_id: channel.id, active: true } } };
  const rows = await tx.user.findMany({
    where: {
      realm_id: channel.realm_id,
      is_active: true,
      OR: channel.invite_only
        ? [subscribed, { role: { lte: Role.ADMINISTRATOR } }]
        : channel.is_web_public
          ? [{}]
          : [subscribed, { role: { lt: Role.GUEST } }],
    },
    select: { id: true },
  });
  return rows.map((r) => r.id);
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
  prisma: PrismaClient,
  user: AuthedUser,
  query: ChannelQuery,
): Promise<Channel[]> {
  const [channels, subscribed, ownerSubscribed] = await Promise.all([
    prisma.channel.findMany({
      where: { realm_id: user.realm_id, ...(query.excludeArchived ? { is_archived: false } : {}) },
    }),
    activeSubscriptionIds(prisma, user.id),
    query.includeOwnerSubscribed && user.is_bot
      ? prisma.user
          .findUnique({ where: { id: user.id }, select: { bot_owner_id: true } })
          .then((bot) =>
            bot?.bot_owner_id == null
              ? new Set<number>()
              : activeSubscriptionIds(prisma, bot.bot_owner_id),
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

async function activeSubscriptionIds(prisma: PrismaClient, userId: number): Promise<Set<number>> {
  const rows = await prisma.subscription.findMany({
    where: { user_id: userId, active: true },
    select: { channel_id: true },
  });
  return new Set(rows.map((r) => r.channel_id));
}

/** Whether the realm has a web-public channel that is not archived (`realm_web_public_access_enabled`). */
export async function hasWebPublicChannels(
  prisma: PrismaClient,
  realmId: number,
): Promise<boolean> {
  const count = await prisma.channel.count({
    where: { realm_id: realmId, is_web_public: true, is_archived: false },
  });
  return count > 0;
}
