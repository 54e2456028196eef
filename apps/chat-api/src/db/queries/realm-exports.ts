import type { Tx } from "../kysely";

/** Stores a new export request; answers it as stored. */
export function insertRealmExport(
  tx: Tx,
  row: { realm_id: number; acting_user_id: number; export_type: number },
) {
  return tx.prisma.realmExport.create({ data: row });
}

/** The realm's exports, oldest first. */
export function realmExportsOf(tx: Tx, realmId: number) {
  return tx.prisma.realmExport.findMany({ where: { realm_id: realmId }, orderBy: { id: "asc" } });
}

/** How many exports the realm asked for since `since`. */
export function exportsSince(tx: Tx, realmId: number, since: Date): Promise<number> {
  return tx.prisma.realmExport.count({
    where: { realm_id: realmId, date_requested: { gte: since } },
  });
}

/** Marks export `id` written, at `pathId`. */
export async function finishRealmExport(tx: Tx, id: number, pathId: string): Promise<void> {
  await tx.prisma.realmExport.update({
    where: { id },
    data: { date_finished: new Date(), path_id: pathId },
  });
}

/** Marks export `id` failed. */
export async function failRealmExport(tx: Tx, id: number): Promise<void> {
  await tx.prisma.realmExport.update({ where: { id }, data: { date_failed: new Date() } });
}

/** The realm's people as an export writes them (every account, deactivated ones and bots too). */
export function exportPeople(tx: Tx, realmId: number) {
  return tx.prisma.user.findMany({
    where: { realm_id: realmId },
    select: {
      id: true,
      email: true,
      full_name: true,
      role: true,
      is_bot: true,
      bot_type: true,
      bot_owner_id: true,
      is_active: true,
      date_joined: true,
      timezone: true,
    },
    orderBy: { id: "asc" },
  });
}

/** The realm's channels an export writes: the public ones, or all with `includePrivate`. */
export function exportChannels(tx: Tx, realmId: number, includePrivate: boolean) {
  return tx.prisma.channel.findMany({
    where: { realm_id: realmId, ...(includePrivate ? {} : { invite_only: false }) },
    select: {
      id: true,
      name: true,
      description: true,
      invite_only: true,
      is_web_public: true,
      history_public_to_subscribers: true,
      is_archived: true,
      date_created: true,
    },
    orderBy: { id: "asc" },
  });
}

/** The subscriptions to channels `channelIds`. */
export function exportSubscriptions(tx: Tx, channelIds: readonly number[]) {
  return tx.prisma.subscription.findMany({
    where: { channel_id: { in: [...channelIds] } },
    select: { user_id: true, channel_id: true, active: true },
    orderBy: [{ channel_id: "asc" }, { user_id: "asc" }],
  });
}

/** The realm's named groups with their direct members and subgroups. */
export function exportGroups(tx: Tx, realmId: number) {
  return tx.prisma.userGroup.findMany({
    where: { realm_id: realmId, name: { not: null } },
    select: {
      id: true,
      name: true,
      description: true,
      is_system_group: true,
      deactivated: true,
      members: { select: { user_id: true } },
      subgroups: { select: { subgroup_id: true } },
    },
    orderBy: { id: "asc" },
  });
}

/**
 * The realm's next `limit` messages after id `afterId` that an export
 * writes: those of channels `channelIds`, and the direct messages sent by
 * `directSenders` (people who consented); with their reactions.
 */
export function exportMessagesAfter(
  tx: Tx,
  realmId: number,
  afterId: number,
  limit: number,
  channelIds: readonly number[],
  directSenders: readonly number[],
) {
  return tx.prisma.message.findMany({
    where: {
      realm_id: realmId,
      id: { gt: afterId },
      OR: [
        { channel_id: { in: [...channelIds] } },
        { channel_id: null, sender_id: { in: [...directSenders] } },
      ],
    },
    select: {
      id: true,
      sender_id: true,
      channel_id: true,
      topic: true,
      dm_key: true,
      content: true,
      rendered_content: true,
      date_sent: true,
      last_edit_time: true,
      reactions: {
        select: { user_id: true, emoji_name: true, emoji_code: true, reaction_type: true },
      },
    },
    orderBy: { id: "asc" },
    take: limit,
  });
}

/** The uploads messages `messageIds` link to. */
export function exportAttachments(tx: Tx, messageIds: readonly number[]) {
  return tx.prisma.attachment.findMany({
    where: { messages: { some: { message_id: { in: [...messageIds] } } } },
    select: { path_id: true, file_name: true, content_type: true, size: true, owner_id: true },
  });
}
