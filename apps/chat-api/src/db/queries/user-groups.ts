import { type Expression, type Kysely, type RawBuilder, sql } from "kysely";
import type { DB } from "../../gen/kysely/tables";
import type { Tx } from "../kysely";
import { caselessEquals } from "./text";

/** Ids of every group reachable from `ids` through subgroups, `ids` included (UNION stops cycles). */
export async function withSubgroups(tx: Tx, ids: readonly number[]): Promise<number[]> {
  const rows = await tx.q
    .withRecursive("reach(id)", (db) =>
      db
        .selectNoFrom(sql<number>`unnest(${[...ids]}::int[])`.as("id"))
        .union(
          db
            .selectFrom("user_group_subgroups as s")
            .innerJoin("reach as r", "r.id", "s.supergroup_id")
            .select("s.subgroup_id as id"),
        ),
    )
    .selectFrom("reach")
    .select("id")
    .execute();
  return rows.map((r) => r.id);
}

/**
 * Waits for, then holds until the transaction ends, the advisory lock (`space`, `key`).
 * (The void result is cast to text, a type every driver reads.)
 */
export async function advisoryLock(tx: Tx, space: number, key: number): Promise<void> {
  await tx.q
    .selectNoFrom((eb) =>
      eb
        .cast(
          eb.fn("pg_advisory_xact_lock", [
            eb.cast(eb.val(space), "integer"),
            eb.cast(eb.val(key), "integer"),
          ]),
          "text",
        )
        .as("locked"),
    )
    .execute();
}

/**
 * Whether user `userId` is an active member of group `group` (an id, or a
 * column of the enclosing query): directly, or (unless `directOnly`) through
 * subgroups at any depth. One expression whatever the depth; UNION stops
 * cycles.
 */
export function memberOf(
  group: Expression<number>,
  userId: number,
  directOnly: boolean,
): RawBuilder<boolean> {
  const groups = directOnly
    ? sql`SELECT ${group}::int`
    : sql`SELECT ${group}::int UNION
          SELECT s.subgroup_id FROM user_group_subgroups s JOIN g ON g.id = s.supergroup_id`;
  return sql<boolean>`EXISTS (
    WITH RECURSIVE g(id) AS (${groups})
    SELECT 1 FROM user_group_members m
    JOIN g ON g.id = m.group_id JOIN users u ON u.id = m.user_id
    WHERE m.user_id = ${userId} AND u.is_active)`;
}

/**
 * Whether group `groupId` and user `userId` are realm `realmId`'s (`null`: a
 * group already known to be the realm's, such as a permission setting's), and
 * whether the user is an active member of the group ({@link memberOf}; with
 * `realmId`, only when the group is the realm's). One statement.
 */
export function groupMembershipQuery(
  q: Kysely<DB>,
  groupId: number,
  realmId: number | null,
  userId: number,
  directOnly: boolean,
) {
  const group = q
    .selectFrom("user_groups")
    .select("id")
    .where("id", "=", groupId)
    .$if(realmId !== null, (query) => query.where("realm_id", "=", realmId ?? 0));
  return q.selectNoFrom((eb) => [
    eb.exists(group).$castTo<boolean>().as("group_found"),
    eb
      .exists(
        eb
          .selectFrom("users")
          .select("id")
          .where("id", "=", userId)
          .$if(realmId !== null, (query) => query.where("realm_id", "=", realmId ?? 0)),
      )
      .$castTo<boolean>()
      .as("user_found"),
    eb
      .and([eb.exists(group), memberOf(eb.val(groupId), userId, directOnly)])
      .$castTo<boolean>()
      .as("member"),
  ]);
}

/** {@link groupMembershipQuery}, run on `tx`. */
export function groupMembership(
  tx: Tx,
  groupId: number,
  realmId: number | null,
  userId: number,
  directOnly: boolean,
) {
  return groupMembershipQuery(tx.q, groupId, realmId, userId, directOnly).executeTakeFirstOrThrow();
}

/** The realm's group named `name` (a system group's name, such as `role:members`). */
export function groupByName(tx: Tx, realmId: number, name: string) {
  return tx.prisma.userGroup.findFirstOrThrow({ where: { realm_id: realmId, name } });
}

/** Whether `groupId` is a named, non-system group of the realm (one an invitation may name). */
export async function isNamedUserGroup(tx: Tx, realmId: number, groupId: number): Promise<boolean> {
  const group = await tx.prisma.userGroup.findFirst({
    where: { id: groupId, realm_id: realmId, name: { not: null }, is_system_group: false },
    select: { id: true },
  });
  return group !== null;
}

/** The realm's named group `groupId` (live or deactivated, system or not), or null. */
export function namedGroupInRealm(tx: Tx, realmId: number, groupId: number) {
  return tx.prisma.userGroup.findFirst({
    where: { id: groupId, realm_id: realmId, name: { not: null } },
  });
}

/** Group `groupId` (it exists). */
export function userGroupById(tx: Tx, groupId: number) {
  return tx.prisma.userGroup.findUniqueOrThrow({ where: { id: groupId } });
}

/** Whether the realm has a group named `name`. */
export async function groupNameTaken(tx: Tx, realmId: number, name: string): Promise<boolean> {
  const group = await tx.prisma.userGroup.findFirst({
    where: { realm_id: realmId, name },
    select: { id: true },
  });
  return group !== null;
}

/**
 * The first of `ids` that is not a named group of the realm (with `liveOnly`,
 * not a live one), if any.
 */
export async function firstUnknownGroup(
  tx: Tx,
  realmId: number,
  ids: readonly number[],
  liveOnly: boolean,
): Promise<number | undefined> {
  const found = await tx.prisma.userGroup.findMany({
    where: {
      id: { in: [...ids] },
      realm_id: realmId,
      name: { not: null },
      ...(liveOnly ? { deactivated: false } : {}),
    },
    select: { id: true },
  });
  const known = new Set(found.map((g) => g.id));
  return ids.find((id) => !known.has(id));
}

/** A new group's own columns (its permission settings are group ids). */
export interface UserGroupRow {
  realm_id: number;
  name: string | null;
  description?: string;
  creator_id?: number;
  can_add_members_group_id?: number;
  can_join_group_id?: number;
  can_leave_group_id?: number;
  can_manage_group_id?: number;
  can_mention_group_id?: number;
  can_remove_members_group_id?: number;
}

/** Stores a group with its direct members and subgroups; answers its id. */
export async function insertUserGroup(
  tx: Tx,
  row: UserGroupRow,
  memberIds: readonly number[],
  subgroupIds: readonly number[],
): Promise<number> {
  const created = await tx.prisma.userGroup.create({
    data: {
      ...row,
      members: { create: memberIds.map((user_id) => ({ user_id })) },
      subgroups: { create: subgroupIds.map((subgroup_id) => ({ subgroup_id })) },
    },
    select: { id: true },
  });
  return created.id;
}

/** Ids of the realm's named groups, by id (deactivated ones too if asked). */
export async function namedGroupIds(
  tx: Tx,
  realmId: number,
  includeDeactivated: boolean,
): Promise<number[]> {
  const rows = await tx.prisma.userGroup.findMany({
    where: {
      realm_id: realmId,
      name: { not: null },
      ...(includeDeactivated ? {} : { deactivated: false }),
    },
    select: { id: true },
    orderBy: { id: "asc" },
  });
  return rows.map((r) => r.id);
}

/** Groups `ids` by id, each with its active direct members and its direct subgroups. */
export function groupsWithMembers(tx: Tx, ids: readonly number[]) {
  return tx.prisma.userGroup.findMany({
    where: { id: { in: [...ids] } },
    include: { members: { where: { user: { is_active: true } } }, subgroups: true },
    orderBy: { id: "asc" },
  });
}

/** The realm's live named groups, by id. */
export function liveNamedGroups(tx: Tx, realmId: number) {
  return tx.prisma.userGroup.findMany({
    where: { realm_id: realmId, name: { not: null }, deactivated: false },
    orderBy: { id: "asc" },
  });
}

/** Ids of group `groupId`'s direct subgroups. */
export async function subgroupIdsOf(tx: Tx, groupId: number): Promise<number[]> {
  const rows = await tx.prisma.userGroupSubgroup.findMany({
    where: { supergroup_id: groupId },
    select: { subgroup_id: true },
  });
  return rows.map((r) => r.subgroup_id);
}

/** The groups that hold `groupId` as a direct subgroup, with their rows. */
export function supergroupsOf(tx: Tx, groupId: number) {
  return tx.prisma.userGroupSubgroup.findMany({
    where: { subgroup_id: groupId },
    include: { supergroup: true },
  });
}

/** Adds direct subgroups to group `groupId`. */
export async function insertSubgroups(
  tx: Tx,
  groupId: number,
  subgroupIds: readonly number[],
): Promise<void> {
  await insertSubgroupLinks(
    tx,
    subgroupIds.map((id) => ({ supergroup_id: groupId, subgroup_id: id })),
  );
}

/** Adds direct subgroups to any groups, in one statement. */
export async function insertSubgroupLinks(
  tx: Tx,
  links: readonly { supergroup_id: number; subgroup_id: number }[],
): Promise<void> {
  await tx.prisma.userGroupSubgroup.createMany({ data: [...links] });
}

/** Removes direct subgroups from group `groupId`. */
export async function deleteSubgroups(
  tx: Tx,
  groupId: number,
  subgroupIds: readonly number[],
): Promise<void> {
  await tx.prisma.userGroupSubgroup.deleteMany({
    where: { supergroup_id: groupId, subgroup_id: { in: [...subgroupIds] } },
  });
}

/** Which of `userIds` are direct members of group `groupId`. */
export async function directMembersAmong(
  tx: Tx,
  groupId: number,
  userIds: readonly number[],
): Promise<Set<number>> {
  const rows = await tx.prisma.userGroupMember.findMany({
    where: { group_id: groupId, user_id: { in: [...userIds] } },
    select: { user_id: true },
  });
  return new Set(rows.map((m) => m.user_id));
}

/** Makes `userIds` direct members of group `groupId`. */
export async function insertGroupMembers(
  tx: Tx,
  groupId: number,
  userIds: readonly number[],
): Promise<void> {
  await tx.prisma.userGroupMember.createMany({
    data: userIds.map((user_id) => ({ group_id: groupId, user_id })),
  });
}

/** Removes `userIds` from group `groupId`'s direct members. */
export async function deleteGroupMembers(
  tx: Tx,
  groupId: number,
  userIds: readonly number[],
): Promise<void> {
  await tx.prisma.userGroupMember.deleteMany({
    where: { group_id: groupId, user_id: { in: [...userIds] } },
  });
}

/** Marks group `groupId` deactivated. */
export async function deactivateGroup(tx: Tx, groupId: number): Promise<void> {
  await tx.prisma.userGroup.update({ where: { id: groupId }, data: { deactivated: true } });
}

/** The realm's live groups named (any case) `names`. */
export function mentionableGroups(tx: Tx, realmId: number, names: readonly string[]) {
  return tx.prisma.userGroup.findMany({
    where: {
      realm_id: realmId,
      deactivated: false,
      OR: names.map((name) => ({ name: caselessEquals(name) })),
    },
    select: { id: true, name: true },
  });
}

/** Which of `userIds` are direct members of one of `groupIds`. */
export async function membersAmong(
  tx: Tx,
  groupIds: readonly number[],
  userIds: readonly number[],
): Promise<number[]> {
  const rows = await tx.prisma.userGroupMember.findMany({
    where: { group_id: { in: [...groupIds] }, user_id: { in: [...userIds] } },
    select: { user_id: true },
  });
  return rows.map((r) => r.user_id);
}

/** Active users who are direct members of one of `groupIds`, by id, each once. */
export async function activeMembersOfGroups(
  tx: Tx,
  groupIds: readonly number[],
): Promise<number[]> {
  if (groupIds.length === 0) return [];
  const rows = await tx.q
    .selectFrom("user_group_members as m")
    .innerJoin("users as u", "u.id", "m.user_id")
    .select("m.user_id")
    .distinct()
    .where("m.group_id", "in", [...groupIds])
    .where("u.is_active", "=", true)
    .orderBy("m.user_id")
    .execute();
  return rows.map((r) => r.user_id);
}

/** Changes columns of user group `groupId`. */
export async function updateUserGroup(
  tx: Tx,
  groupId: number,
  change: Partial<Omit<UserGroupRow, "realm_id">>,
): Promise<void> {
  await tx.prisma.userGroup.update({ where: { id: groupId }, data: change });
}
