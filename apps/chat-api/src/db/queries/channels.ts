import { type Kysely } from "kysely";
import type { DB } from "../../gen/kysely/tables";
import type { Prisma } from "../../gen/prisma/client";
import type { Tx } from "../kysely";
import { caselessEquals, sameText } from "./text";
import { memberOf } from "./user-groups";
import { Role } from "../../lib/roles";
import { subscribersByChannel } from "./subscriptions";

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

/** Archives a channel: it stops being a default channel. */
export async function archiveChannel(tx: Tx, channelId: number): Promise<void> {
  await tx.prisma.channel.update({
    where: { id: channelId },
    data: { is_archived: true, is_default_stream: false },
  });
}

/**
 * Ids of the realm's active users who can see the channel, who hear of its
 * creation, changes and subscribers: its subscribers, and by the channel's
 * kind administrators (private), members (public; guests only when
 * subscribed) or everyone (web-public).
 */
export async function channelViewerIds(tx: Tx, channel: ViewedChannel): Promise<number[]> {
  return (await channelViewersByChannel(tx, [channel])).get(channel.id) ?? [];
}

/** A channel as far as who may see it goes. */
type ViewedChannel = { id: number; realm_id: number; invite_only: boolean; is_web_public: boolean };

/**
 * {@link channelViewerIds} of many channels of one realm at once, in two
 * statements whatever their number: the channels' subscribers, and the
 * realm's active people with their roles.
 */
export async function channelViewersByChannel(
  tx: Tx,
  channels: readonly ViewedChannel[],
  /** The channels' subscribers when the caller has read them already. */
  known?: Map<number, number[]>,
): Promise<Map<number, number[]>> {
  const [first] = channels;
  if (first === undefined) return new Map();
  const subscribers =
    known ??
    (await subscribersByChannel(
      tx,
      channels.map((c) => c.id),
    ));
  // Only the roles that see some channel asked about by their kind: a lookup
  // of private channels reads the administrators, not the whole realm.
  const widest = channels.some((c) => !c.invite_only && c.is_web_public)
    ? Role.GUEST
    : channels.some((c) => !c.invite_only)
      ? Role.MEMBER
      : Role.ADMINISTRATOR;
  const people = await tx.q
    .selectFrom("users")
    .select(["id", "role"])
    .where("realm_id", "=", first.realm_id)
    .where("is_active", "=", true)
    .where("role", "<=", widest)
    .orderBy("id")
    .execute();
  const everyone = people.map((p) => p.id);
  const members = people.filter((p) => p.role < Role.GUEST).map((p) => p.id);
  const administrators = people.filter((p) => p.role <= Role.ADMINISTRATOR).map((p) => p.id);
  const viewers = new Map<number, number[]>();
  for (const channel of channels) {
    if (!channel.invite_only && channel.is_web_public) {
      viewers.set(channel.id, everyone);
      continue;
    }
    const ids = new Set(subscribers.get(channel.id) ?? []);
    for (const id of channel.invite_only ? administrators : members) ids.add(id);
    viewers.set(channel.id, [...ids]);
  }
  return viewers;
}

/** The realm's channels (live ones only if asked). */
export function channelsOf(tx: Tx, realmId: number, liveOnly: boolean) {
  return tx.prisma.channel.findMany({
    where: { realm_id: realmId, ...(liveOnly ? { is_archived: false } : {}) },
  });
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

/** Ids of the realm's live default channels, by id. */
export async function defaultChannelIds(tx: Tx, realmId: number): Promise<number[]> {
  return (await defaultChannels(tx, realmId)).map((c) => c.id).sort((a, b) => a - b);
}

/** Changes channel `channelId`'s columns; answers it as stored. */
export function updateChannel(
  tx: Tx,
  channelId: number,
  change: Prisma.ChannelUncheckedUpdateInput,
) {
  return tx.prisma.channel.update({ where: { id: channelId }, data: change });
}
