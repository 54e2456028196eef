import { sql } from "kysely";
import type { Tx } from "../kysely";
import type { Prisma } from "../../gen/prisma/client";

/**
 * The statements of an import (`admin import-realm`): rows of an export
 * archive written with their ids, each kind in one set-based statement.
 */

/** How many realms the server holds (an import needs none). */
export function realmCount(tx: Tx): Promise<number> {
  return tx.prisma.realm.count();
}

/** Writes the realm's row. */
export async function insertRealmRow(tx: Tx, row: Prisma.RealmUncheckedCreateInput): Promise<void> {
  await tx.prisma.realm.create({ data: row });
}

/** Sets the realm's columns that point at its groups and channels, once those are written. */
export async function linkRealm(
  tx: Tx,
  realmId: number,
  links: Prisma.RealmUncheckedUpdateInput,
): Promise<void> {
  await tx.prisma.realm.update({ where: { id: realmId }, data: links });
}

export async function insertUsers(tx: Tx, rows: Prisma.UserCreateManyInput[]): Promise<void> {
  await tx.prisma.user.createMany({ data: rows });
}

export async function insertGroups(tx: Tx, rows: Prisma.UserGroupCreateManyInput[]): Promise<void> {
  await tx.prisma.userGroup.createMany({ data: rows });
}

export async function insertGroupMembers(
  tx: Tx,
  rows: Prisma.UserGroupMemberCreateManyInput[],
): Promise<void> {
  await tx.prisma.userGroupMember.createMany({ data: rows });
}

export async function insertGroupSubgroups(
  tx: Tx,
  rows: Prisma.UserGroupSubgroupCreateManyInput[],
): Promise<void> {
  await tx.prisma.userGroupSubgroup.createMany({ data: rows });
}

/** A group's settings: which groups may do what with it. */
export interface GroupSettingColumns {
  id: number;
  can_add_members_group_id: number | null;
  can_join_group_id: number | null;
  can_leave_group_id: number | null;
  can_manage_group_id: number | null;
  can_mention_group_id: number | null;
  can_remove_members_group_id: number | null;
}

/**
 * Points the groups' settings at their groups, all in one statement: a
 * group's setting may name a group written after it.
 */
export async function linkGroupSettings(
  tx: Tx,
  rows: readonly GroupSettingColumns[],
): Promise<void> {
  if (rows.length === 0) return;
  await sql`
    UPDATE user_groups AS g SET
      can_add_members_group_id = v.can_add_members_group_id,
      can_join_group_id = v.can_join_group_id,
      can_leave_group_id = v.can_leave_group_id,
      can_manage_group_id = v.can_manage_group_id,
      can_mention_group_id = v.can_mention_group_id,
      can_remove_members_group_id = v.can_remove_members_group_id
    FROM json_to_recordset(${JSON.stringify(rows)}::json) AS v(
      id int, can_add_members_group_id int, can_join_group_id int, can_leave_group_id int,
      can_manage_group_id int, can_mention_group_id int, can_remove_members_group_id int)
    WHERE g.id = v.id`.execute(tx.q);
}

export async function insertChannelFolders(
  tx: Tx,
  rows: Prisma.ChannelFolderCreateManyInput[],
): Promise<void> {
  await tx.prisma.channelFolder.createMany({ data: rows });
}

export async function insertChannels(tx: Tx, rows: Prisma.ChannelCreateManyInput[]): Promise<void> {
  await tx.prisma.channel.createMany({ data: rows });
}

export async function insertSubscriptions(
  tx: Tx,
  rows: Prisma.SubscriptionCreateManyInput[],
): Promise<void> {
  await tx.prisma.subscription.createMany({ data: rows });
}

export async function insertMessages(tx: Tx, rows: Prisma.MessageCreateManyInput[]): Promise<void> {
  await tx.prisma.message.createMany({ data: rows });
}

export async function insertReactions(
  tx: Tx,
  rows: Prisma.ReactionCreateManyInput[],
): Promise<void> {
  await tx.prisma.reaction.createMany({ data: rows });
}

export async function insertUserMessages(
  tx: Tx,
  rows: Prisma.UserMessageCreateManyInput[],
): Promise<void> {
  await tx.prisma.userMessage.createMany({ data: rows });
}

/** Writes attachments; answers their new ids by path. */
export async function insertAttachments(
  tx: Tx,
  rows: Prisma.AttachmentCreateManyInput[],
): Promise<Map<string, number>> {
  const written = await tx.prisma.attachment.createManyAndReturn({
    data: rows,
    select: { id: true, path_id: true },
  });
  return new Map(written.map((row) => [row.path_id, row.id]));
}

export async function insertAttachmentMessages(
  tx: Tx,
  rows: Prisma.AttachmentMessageCreateManyInput[],
): Promise<void> {
  await tx.prisma.attachmentMessage.createMany({ data: rows });
}

/** The tables whose ids an import writes: their sequences must go on after them. */
const IMPORTED_ID_TABLES = [
  "realms",
  "users",
  "user_groups",
  "channel_folders",
  "channels",
  "messages",
] as const;

/** Sets each imported table's id sequence past its largest id. */
export async function advanceSequences(tx: Tx): Promise<void> {
  for (const table of IMPORTED_ID_TABLES)
    await sql`SELECT setval(pg_get_serial_sequence(${table}, 'id'),
      coalesce((SELECT max(id) FROM ${sql.table(table)}), 0) + 1, false)`.execute(tx.q);
}
