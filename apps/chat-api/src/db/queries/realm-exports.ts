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

/**
 * The realm's accounts as an export writes them: every one (deactivated ones
 * and bots too), every column but the secrets (API key, password hash); the
 * delivery addresses only with `withDeliveryEmail` (a standard export).
 */
export function exportPeople(tx: Tx, realmId: number, withDeliveryEmail: boolean) {
  return tx.prisma.user.findMany({
    where: { realm_id: realmId },
    omit: { api_key: true, password: true, delivery_email: !withDeliveryEmail },
    orderBy: { id: "asc" },
  });
}

/** The realm's whole row. */
export function exportRealmRow(tx: Tx, realmId: number) {
  return tx.prisma.realm.findUniqueOrThrow({ where: { id: realmId } });
}

/** The realm's channels an export writes, whole rows: the public ones, or all with `includePrivate`. */
export function exportChannels(tx: Tx, realmId: number, includePrivate: boolean) {
  return tx.prisma.channel.findMany({
    where: { realm_id: realmId, ...(includePrivate ? {} : { invite_only: false }) },
    orderBy: { id: "asc" },
  });
}

/** The realm's channel folders. */
export function exportChannelFolders(tx: Tx, realmId: number) {
  return tx.prisma.channelFolder.findMany({ where: { realm_id: realmId }, orderBy: { id: "asc" } });
}

/** The subscriptions to channels `channelIds`, whole rows but their ids. */
export function exportSubscriptions(tx: Tx, channelIds: readonly number[]) {
  return tx.prisma.subscription.findMany({
    where: { channel_id: { in: [...channelIds] } },
    omit: { id: true },
    orderBy: [{ channel_id: "asc" }, { user_id: "asc" }],
  });
}

/**
 * The realm's groups, whole rows, named and anonymous (the values of group
 * settings), with their direct members and subgroups.
 */
export function exportGroups(tx: Tx, realmId: number) {
  return tx.prisma.userGroup.findMany({
    where: { realm_id: realmId },
    include: {
      members: { select: { user_id: true } },
      subgroups: { select: { subgroup_id: true } },
    },
    orderBy: { id: "asc" },
  });
}

/** Who has messages `messageIds`, with their flags. */
export function exportUserMessages(tx: Tx, messageIds: readonly number[]) {
  return tx.prisma.userMessage.findMany({
    where: { message_id: { in: [...messageIds] } },
    orderBy: [{ message_id: "asc" }, { user_id: "asc" }],
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
      edit_history: true,
      edit_summary: true,
      reactions: {
        select: { user_id: true, emoji_name: true, emoji_code: true, reaction_type: true },
      },
    },
    orderBy: { id: "asc" },
    take: limit,
  });
}

/** The uploads messages `messageIds` link to, with which of those messages link each. */
export function exportAttachments(tx: Tx, messageIds: readonly number[]) {
  const ids = [...messageIds];
  return tx.prisma.attachment.findMany({
    where: { messages: { some: { message_id: { in: ids } } } },
    select: {
      path_id: true,
      file_name: true,
      content_type: true,
      size: true,
      owner_id: true,
      created_at: true,
      messages: { where: { message_id: { in: ids } }, select: { message_id: true } },
    },
  });
}
