import { type Expression, type Kysely, type RawBuilder, sql } from "kysely";
import type { DB } from "../../gen/kysely/tables";
import type { Tx } from "../kysely";

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

/** Makes user `userId` a direct member of group `groupId`. */
export async function insertGroupMember(tx: Tx, groupId: number, userId: number): Promise<void> {
  await tx.prisma.userGroupMember.create({ data: { group_id: groupId, user_id: userId } });
}

/** Whether `groupId` is a named, non-system group of the realm (one an invitation may name). */
export async function isNamedUserGroup(tx: Tx, realmId: number, groupId: number): Promise<boolean> {
  const group = await tx.prisma.userGroup.findFirst({
    where: { id: groupId, realm_id: realmId, name: { not: null }, is_system_group: false },
    select: { id: true },
  });
  return group !== null;
}
