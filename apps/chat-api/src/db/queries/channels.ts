import { type Kysely, sql } from "kysely";
import type { DB } from "../../gen/kysely/tables";
import type { Prisma } from "../../gen/prisma/client";
import type { Tx } from "../kysely";
import { caselessEquals, sameText } from "./text";
import { memberOf } from "./user-groups";
import { Role } from "../../lib/roles";

/** The id of realm `realmId`'s channel named `name`, compared case-insensitively as Zulip does. */
export async function channelIdByName(
  tx: Tx,
  realmId: number,
  name: string,
): Promise<number | undefined> {
  const row = await tx.q
    .selectFrom("channels")
    .select("id")
    .where("realm_id", "=", realmId)
    .where((eb) => sameText(eb, "name", name))
    .executeTakeFirst();
  return row?.id;
}

/** Which of `names` are channels of realm `realmId` (compared case-insensitively), lower-cased. */
export async function existingChannelNames(
  tx: Tx,
  realmId: number,
  names: readonly string[],
): Promise<Set<string>> {
  if (names.length === 0) return new Set();
  const rows = await tx.q
    .selectFrom("channels")
    .select((eb) => eb.fn<string>("lower", ["name"]).as("name"))
    .where("realm_id", "=", realmId)
    .where(
      (eb) => eb.fn("lower", ["name"]),
      "in",
      names.map((n) => n.toLowerCase()),
    )
    .execute();
  return new Set(rows.map((r) => r.name));
}

/**
 * What a post to realm `realmId`'s channel `to` (an id, or a name compared
 * case-insensitively) needs to know of user `userId`, in one statement: the
 * channel; whether the user is its active subscriber, may send to it (its
 * `can_send_message_group`) and may start topics in it
 * (`can_create_topic_group`); whether `topic` (compared case-insensitively)
 * already has a message there.
 */
export function channelPostingQuery(
  q: Kysely<DB>,
  realmId: number,
  userId: number,
  to: number | string,
  topic: string,
) {
  return q
    .selectFrom("channels")
    .leftJoin("subscriptions", (join) =>
      join
        .onRef("subscriptions.channel_id", "=", "channels.id")
        .on("subscriptions.user_id", "=", userId),
    )
    .selectAll("channels")
    .select((eb) => [
      eb.fn.coalesce("subscriptions.active", eb.lit(false)).as("subscribed"),
      memberOf(eb.ref("channels.can_send_message_group_id"), userId, false).as("may_send"),
      memberOf(eb.ref("channels.can_create_topic_group_id"), userId, false).as("may_start_topic"),
      eb
        .exists(
          eb
            .selectFrom("messages")
            .select("messages.id")
            .whereRef("messages.channel_id", "=", "channels.id")
            .where((inner) => sameText(inner, "messages.topic", topic)),
        )
        .$castTo<boolean>()
        .as("topic_exists"),
    ])
    .where("channels.realm_id", "=", realmId)
    .where((eb) =>
      typeof to === "number" ? eb("channels.id", "=", to) : sameText(eb, "channels.name", to),
    );
}

/** {@link channelPostingQuery}, run on `tx`. */
export function channelPosting(
  tx: Tx,
  realmId: number,
  userId: number,
  to: number | string,
  topic: string,
) {
  return channelPostingQuery(tx.q, realmId, userId, to, topic).executeTakeFirst();
}

/** Sets a user's visibility policy of a topic (the topic's name compared case-insensitively). */
export async function setTopicPolicy(
  tx: Tx,
  userId: number,
  channelId: number,
  topic: string,
  policy: number,
): Promise<void> {
  await tx.q
    .insertInto("user_topics")
    .values({
      user_id: userId,
      channel_id: channelId,
      topic_name: topic,
      visibility_policy: policy,
      last_updated: sql<Date>`now()`,
    })
    .onConflict((oc) =>
      // The unique index user_topics_user_id_channel_id_lower_topic_name_key (in the migrations).
      oc
        .expression(sql`user_id, channel_id, lower(topic_name)`)
        .doUpdateSet({ visibility_policy: policy, last_updated: sql<Date>`now()` }),
    )
    .execute();
}

/**
 * Removes a user's policy `policy` of a topic (any policy when undefined;
 * the topic's name compared case-insensitively).
 */
export async function clearTopicPolicy(
  tx: Tx,
  userId: number,
  channelId: number,
  topic: string,
  policy: number | undefined,
): Promise<void> {
  const query = tx.q
    .deleteFrom("user_topics")
    .where("user_id", "=", userId)
    .where("channel_id", "=", channelId)
    .where((eb) => sameText(eb, "topic_name", topic));
  await (policy === undefined ? query : query.where("visibility_policy", "=", policy)).execute();
}

/** Channel `channelId`'s visibility columns and user `userId`'s subscription to it (null: none). */
export function channelVisibilityQuery(q: Kysely<DB>, channelId: number, userId: number) {
  return q
    .selectFrom("channels as c")
    .leftJoin("subscriptions as s", (join) =>
      join.onRef("s.channel_id", "=", "c.id").on("s.user_id", "=", userId),
    )
    .select(["c.realm_id", "c.is_web_public", "c.invite_only", "s.active as subscribed"])
    .where("c.id", "=", channelId);
}

/** {@link channelVisibilityQuery}, run on `tx`. */
export function channelVisibility(tx: Tx, channelId: number, userId: number) {
  return channelVisibilityQuery(tx.q, channelId, userId).executeTakeFirst();
}

/**
 * The topics of channel `channelId`, each once (names compared
 * case-insensitively, as Zulip does) with its newest message's id and that
 * message's spelling, newest first. With `receivedBy`, only topics of messages
 * that user received (a channel whose history is not shared with new subscribers).
 */
export async function channelTopics(
  tx: Tx,
  channelId: number,
  receivedBy: number | null,
): Promise<{ name: string; max_id: number }[]> {
  const rows = await tx.q
    .selectFrom("messages as m")
    .select(["m.topic as name", "m.id as max_id"])
    .where("m.channel_id", "=", channelId)
    .$if(receivedBy !== null, (query) =>
      query.where((eb) =>
        eb.exists(
          eb
            .selectFrom("user_messages as um")
            .select("um.message_id")
            .whereRef("um.message_id", "=", "m.id")
            .where("um.user_id", "=", receivedBy ?? 0),
        ),
      ),
    )
    .distinctOn((eb) => eb.fn("lower", ["m.topic"]))
    .orderBy((eb) => eb.fn("lower", ["m.topic"]))
    .orderBy("m.id", "desc")
    .execute();
  return rows.sort((a, b) => b.max_id - a.max_id);
}

/** The ids of channel `channelId`'s active subscribers whose accounts are active, ascending. */
export async function channelSubscriberIds(tx: Tx, channelId: number): Promise<number[]> {
  const rows = await tx.q
    .selectFrom("subscriptions as s")
    .innerJoin("users as u", "u.id", "s.user_id")
    .select("u.id")
    .where("s.channel_id", "=", channelId)
    .where("s.active", "=", true)
    .where("u.is_active", "=", true)
    .orderBy("u.id")
    .execute();
  return rows.map((r) => r.id);
}

/** Whether user `userId` has a policy for a topic of channel `channelId` (any case). */
export async function topicPolicyExists(
  tx: Tx,
  userId: number,
  channelId: number,
  topic: string,
): Promise<boolean> {
  const row = await tx.q
    .selectFrom("user_topics")
    .select("id")
    .where("user_id", "=", userId)
    .where("channel_id", "=", channelId)
    .where((eb) => sameText(eb, "topic_name", topic))
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * Subscribes `userIds` to channel `channelId` in one statement: new rows, or
 * inactive ones made active again. Answers who was not subscribed before
 * (the rest already were).
 */
export async function activateSubscriptions(
  tx: Tx,
  channelId: number,
  userIds: readonly number[],
): Promise<Set<number>> {
  if (userIds.length === 0) return new Set();
  const result = await sql<{ user_id: number }>`
    INSERT INTO subscriptions (user_id, channel_id)
    SELECT t.user_id, ${channelId}::int FROM unnest(${[...new Set(userIds)]}::int[]) AS t(user_id)
    ON CONFLICT (user_id, channel_id) DO UPDATE SET active = true WHERE subscriptions.active = false
    RETURNING user_id`.execute(tx.q);
  return new Set(result.rows.map((r) => r.user_id));
}

/** The realm's live default channels. */
export function defaultChannels(tx: Tx, realmId: number) {
  return tx.prisma.channel.findMany({
    where: { realm_id: realmId, is_default_stream: true, is_archived: false },
  });
}

/** The realm's live channels, by id. */
export function liveChannels(tx: Tx, realmId: number) {
  return tx.prisma.channel.findMany({
    where: { realm_id: realmId, is_archived: false },
    orderBy: { id: "asc" },
  });
}

/** Channel `channelId`, or null. */
export function channelById(tx: Tx, channelId: number) {
  return tx.prisma.channel.findUnique({ where: { id: channelId } });
}

/** Whether user `userId` is an active subscriber of channel `channelId`. */
export async function isSubscribed(tx: Tx, userId: number, channelId: number): Promise<boolean> {
  const subscription = await tx.prisma.subscription.findUnique({
    where: { user_id_channel_id: { user_id: userId, channel_id: channelId } },
    select: { active: true },
  });
  return subscription?.active === true;
}

/** Archives a channel: it stops being a default channel. */
export async function archiveChannel(tx: Tx, channelId: number): Promise<void> {
  await tx.prisma.channel.update({
    where: { id: channelId },
    data: { is_archived: true, is_default_stream: false },
  });
}

/** How many topics user `userId` has a visibility policy for. */
export function topicPolicyCount(tx: Tx, userId: number): Promise<number> {
  return tx.prisma.userTopic.count({ where: { user_id: userId } });
}

/**
 * Ids of the realm's active users who can see the channel: its subscribers,
 * and by the channel's kind administrators (private), members (public) or
 * everyone (web-public).
 */
export async function channelViewerIds(
  tx: Tx,
  channel: { id: number; realm_id: number; invite_only: boolean; is_web_public: boolean },
): Promise<number[]> {
  const subscribed = { subscriptions: { some: { channel_id: channel.id, active: true } } };
  const rows = await tx.prisma.user.findMany({
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

/** The realm's channels (live ones only if asked). */
export function channelsOf(tx: Tx, realmId: number, liveOnly: boolean) {
  return tx.prisma.channel.findMany({
    where: { realm_id: realmId, ...(liveOnly ? { is_archived: false } : {}) },
  });
}

/** Ids of the channels user `userId` is an active subscriber of. */
export async function subscribedChannelIds(tx: Tx, userId: number): Promise<Set<number>> {
  const rows = await tx.prisma.subscription.findMany({
    where: { user_id: userId, active: true },
    select: { channel_id: true },
  });
  return new Set(rows.map((r) => r.channel_id));
}

/** Whether the realm has a live web-public channel. */
export async function hasLiveWebPublicChannel(tx: Tx, realmId: number): Promise<boolean> {
  const count = await tx.prisma.channel.count({
    where: { realm_id: realmId, is_web_public: true, is_archived: false },
  });
  return count > 0;
}

/**
 * The realm's channels named (any case) `names` that `viewerId` may link:
 * public ones, and private ones they are subscribed to (none without a viewer).
 */
export function linkableChannels(
  tx: Tx,
  realmId: number,
  viewerId: number | undefined,
  names: readonly string[],
) {
  return tx.prisma.channel.findMany({
    where: {
      realm_id: realmId,
      OR: names.map((name) => ({ name: caselessEquals(name) })),
      AND: {
        OR: [
          { invite_only: false },
          ...(viewerId === undefined
            ? []
            : [{ subscriptions: { some: { user_id: viewerId, active: true } } }]),
        ],
      },
    },
    select: { id: true, name: true },
  });
}

/** The realm's live channel `channelId`, or null. */
export function liveChannelInRealm(tx: Tx, realmId: number, channelId: number) {
  return tx.prisma.channel.findFirst({
    where: { id: channelId, realm_id: realmId, is_archived: false },
  });
}

/** A new channel's columns. */
export type NewChannel = Prisma.ChannelUncheckedCreateInput;

/** Stores a channel; answers it as stored. */
export function insertChannel(tx: Tx, row: NewChannel) {
  return tx.prisma.channel.create({ data: row });
}

/** Per channel of `ids` that has messages: its first message id and its newest message's time. */
export function channelMessageStats(tx: Tx, ids: readonly number[]) {
  return tx.prisma.message.groupBy({
    by: ["channel_id"],
    where: { channel_id: { in: [...ids] } },
    _min: { id: true },
    _max: { date_sent: true },
  });
}

/** Per channel of `ids`: how many active users are active subscribers. */
export async function subscriberCounts(
  tx: Tx,
  ids: readonly number[],
): Promise<Map<number, number>> {
  const rows = await tx.prisma.subscription.groupBy({
    by: ["channel_id"],
    where: { channel_id: { in: [...ids] }, active: true, user: { is_active: true } },
    _count: { _all: true },
  });
  return new Map(rows.map((r) => [r.channel_id, r._count._all]));
}

/** Per channel of `ids`: its active subscribers who are active users, by id. */
export async function subscribersByChannel(
  tx: Tx,
  ids: readonly number[],
): Promise<Map<number, number[]>> {
  const rows = await tx.prisma.subscription.findMany({
    where: { channel_id: { in: [...ids] }, active: true, user: { is_active: true } },
    select: { channel_id: true, user_id: true },
    orderBy: { user_id: "asc" },
  });
  const byChannel = new Map<number, number[]>();
  for (const row of rows) {
    const list = byChannel.get(row.channel_id);
    if (list === undefined) byChannel.set(row.channel_id, [row.user_id]);
    else list.push(row.user_id);
  }
  return byChannel;
}

/** User `userId`'s active subscriptions to live channels, with their channels, by channel name. */
export function liveSubscriptionsOf(tx: Tx, userId: number) {
  return tx.prisma.subscription.findMany({
    where: { user_id: userId, active: true, channel: { is_archived: false } },
    include: { channel: true },
    orderBy: { channel: { name: "asc" } },
  });
}

/** Ids of the realm's live default channels, by id. */
export async function defaultChannelIds(tx: Tx, realmId: number): Promise<number[]> {
  return (await defaultChannels(tx, realmId)).map((c) => c.id).sort((a, b) => a - b);
}

/** User `userId`'s topic visibility policies (only those of `policy` if given), by id, with their channels' names. */
export function topicPoliciesOf(tx: Tx, userId: number, policy?: number) {
  return tx.prisma.userTopic.findMany({
    where: { user_id: userId, ...(policy === undefined ? {} : { visibility_policy: policy }) },
    include: { channel: { select: { name: true } } },
    orderBy: { id: "asc" },
  });
}

/** Ends the active subscriptions of `userIds` to channel `channelId`; answers whose ended. */
export async function deactivateSubscriptions(
  tx: Tx,
  channelId: number,
  userIds: readonly number[],
): Promise<number[]> {
  const left = await tx.prisma.subscription.updateManyAndReturn({
    where: { channel_id: channelId, user_id: { in: [...userIds] }, active: true },
    data: { active: false },
    select: { user_id: true },
  });
  return left.map((r) => r.user_id);
}

/** Changes user `userId`'s settings for channel `channelId`; whether they are subscribed. */
export async function updateSubscription(
  tx: Tx,
  userId: number,
  channelId: number,
  change: Record<string, boolean | string>,
): Promise<boolean> {
  const { count } = await tx.prisma.subscription.updateMany({
    where: { user_id: userId, channel_id: channelId, active: true },
    data: change,
  });
  return count > 0;
}

/** Ids of the channels user `userId` muted. */
export async function mutedChannelIds(tx: Tx, userId: number): Promise<Set<number>> {
  const rows = await tx.prisma.subscription.findMany({
    where: { user_id: userId, is_muted: true },
    select: { channel_id: true },
  });
  return new Set(rows.map((s) => s.channel_id));
}

/** User `userId`'s ended subscriptions to live channels, with their channels, by channel name. */
export function formerSubscriptionsOf(tx: Tx, userId: number) {
  return tx.prisma.subscription.findMany({
    where: { user_id: userId, active: false, channel: { is_archived: false } },
    include: { channel: true },
    orderBy: { channel: { name: "asc" } },
  });
}

/** Changes channel `channelId`'s columns; answers it as stored. */
export function updateChannel(
  tx: Tx,
  channelId: number,
  change: Prisma.ChannelUncheckedUpdateInput,
) {
  return tx.prisma.channel.update({ where: { id: channelId }, data: change });
}

/** The subscriptions of `userIds` to channel `channelId` as stored. */
export function subscriptionsTo(tx: Tx, channelId: number, userIds: readonly number[]) {
  return tx.prisma.subscription.findMany({
    where: { channel_id: channelId, user_id: { in: [...userIds] } },
  });
}
