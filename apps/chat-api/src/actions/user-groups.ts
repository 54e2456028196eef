import { InsufficientPermissionError, JsonableError } from "@repo/envelope";
import type { Prisma, PrismaClient, UserGroup } from "../gen/prisma/client";

/** A group of the caller's realm, or `Invalid user group` (another realm's looks the same). */
export async function accessUserGroup(
  prisma: PrismaClient,
  realmId: number,
  groupId: number,
): Promise<UserGroup> {
  const group = await prisma.userGroup.findFirst({ where: { id: groupId, realm_id: realmId } });
  if (group === null) throw new JsonableError("Invalid user group");
  return group;
}

/**
 * Whether `userId` is a member of `groupId`: directly, or (unless `directOnly`)
 * through subgroups at any depth. Deactivated users are never members (feature
 * level 303). One recursive query, whatever the depth; cycles cannot loop it
 * (UNION drops groups already seen).
 */
export async function isGroupMember(
  prisma: PrismaClient,
  groupId: number,
  userId: number,
  directOnly: boolean,
): Promise<boolean> {
  const rows = await prisma.$queryRaw<{ member: boolean }[]>`
    WITH RECURSIVE groups(id) AS (
      SELECT ${groupId}::int
      UNION
      SELECT s.subgroup_id FROM user_group_subgroups s JOIN groups g ON s.supergroup_id = g.id
      WHERE NOT ${directOnly}
    )
    SELECT EXISTS (
      SELECT 1 FROM user_group_members m
      JOIN groups g ON g.id = m.group_id
      JOIN users u ON u.id = m.user_id
      WHERE m.user_id = ${userId} AND u.is_active
    ) AS member`;
  return rows[0]?.member === true;
}

/** Which group setting grants the change (adding needs can_add_members_group, removing can_remove_members_group). */
type GroupPermission = "can_add_members_group_id" | "can_remove_members_group_id";

/**
 * A named, non-system group of the caller's realm that the caller may change:
 * a member of the realm's `can_manage_all_groups` (administrators by default),
 * of the group's `can_manage_group`, or of the setting `permission` names.
 * Deactivated groups may still be changed (feature level 391).
 */
async function accessGroupForUpdate(
  prisma: PrismaClient,
  user: { id: number; realm_id: number },
  groupId: number,
  permission: GroupPermission,
): Promise<UserGroup> {
  const group = await prisma.userGroup.findFirst({
    where: { id: groupId, realm_id: user.realm_id, name: { not: null } },
  });
  if (group === null) throw new JsonableError("Invalid user group");
  if (group.is_system_group) throw new InsufficientPermissionError();
  const realm = await prisma.realm.findUniqueOrThrow({ where: { id: user.realm_id } });
  for (const granting of [
    realm.can_manage_all_groups_id,
    group.can_manage_group_id,
    group[permission],
  ]) {
    if (granting !== null && (await isGroupMember(prisma, granting, user.id, false))) return group;
  }
  throw new InsufficientPermissionError();
}

/** Ids of every group reachable from `ids` through subgroups, `ids` included. */
async function withSubgroups(
  tx: Prisma.TransactionClient,
  ids: readonly number[],
): Promise<Set<number>> {
  const rows = await tx.$queryRaw<{ id: number }[]>`
    WITH RECURSIVE reach(id) AS (
      SELECT unnest(${[...ids]}::int[])
      UNION
      SELECT s.subgroup_id FROM user_group_subgroups s JOIN reach r ON s.supergroup_id = r.id
    )
    SELECT id FROM reach`;
  return new Set(rows.map((r) => r.id));
}

/**
 * Adds and removes subgroups of a group in one transaction, with Zulip's
 * checks and messages: permissions, unknown groups, duplicates, cycles across
 * the whole graph, and removals of groups that are not subgroups.
 */
export async function doUpdateSubgroups(
  prisma: PrismaClient,
  user: { id: number; realm_id: number },
  groupId: number,
  add: readonly number[],
  remove: readonly number[],
): Promise<void> {
  if (add.length === 0 && remove.length === 0) {
    throw new JsonableError('Nothing to do. Specify at least one of "add" or "delete".');
  }
  if (add.length > 0) await accessGroupForUpdate(prisma, user, groupId, "can_add_members_group_id");
  if (remove.length > 0)
    await accessGroupForUpdate(prisma, user, groupId, "can_remove_members_group_id");
  await prisma.$transaction(async (tx) => {
    // One change to a realm's group graph at a time, so two concurrent adds cannot close a cycle.
    await tx.$executeRaw`SELECT pg_advisory_xact_lock(${SUBGROUP_LOCK}::int, ${user.realm_id}::int)`;
    if (add.length > 0) {
      const found = await tx.userGroup.findMany({
        where: {
          id: { in: [...add] },
          realm_id: user.realm_id,
          name: { not: null },
          deactivated: false,
        },
        select: { id: true },
      });
      const known = new Set(found.map((g) => g.id));
      const unknown = add.find((id) => !known.has(id));
      if (unknown !== undefined) throw new JsonableError(`Invalid user group ID: ${unknown}`);
      const current = await tx.userGroupSubgroup.findMany({
        where: { supergroup_id: groupId },
        select: { subgroup_id: true },
      });
      const already = add.find((id) => current.some((c) => c.subgroup_id === id));
      if (already !== undefined)
        throw new JsonableError(`User group ${already} is already a subgroup of this group.`);
      if ((await withSubgroups(tx, add)).has(groupId)) {
        throw new JsonableError(
          `User group ${groupId} is already a subgroup of one of the passed subgroups.`,
        );
      }
      await tx.userGroupSubgroup.createMany({
        data: [...new Set(add)].map((id) => ({ supergroup_id: groupId, subgroup_id: id })),
      });
    }
    if (remove.length > 0) {
      const current = await tx.userGroupSubgroup.findMany({
        where: { supergroup_id: groupId },
        select: { subgroup_id: true },
      });
      const missing = remove.find((id) => !current.some((c) => c.subgroup_id === id));
      if (missing !== undefined)
        throw new JsonableError(`User group ${missing} is not a subgroup of this group.`);
      await tx.userGroupSubgroup.deleteMany({
        where: { supergroup_id: groupId, subgroup_id: { in: [...remove] } },
      });
    }
  });
}

/** Advisory lock class of subgroup changes (the second key is the realm). */
const SUBGROUP_LOCK = 72_071;
