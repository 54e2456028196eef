import { JsonableError } from "@repo/envelope";
import type { PrismaClient, UserGroup } from "../gen/prisma/client";

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
