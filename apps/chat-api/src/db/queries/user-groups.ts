import { type Kysely, sql } from "kysely";
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
 * Whether group `groupId` and user `userId` are realm `realmId`'s (`null`: a
 * group already known to be the realm's, such as a permission setting's), and
 * whether the user is an active member of the group: directly, or (unless
 * `directOnly`) through subgroups at any depth. One statement whatever the
 * depth; UNION stops cycles.
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
  return q
    .withRecursive("groups(id)", (db) =>
      directOnly
        ? group
        : group.union(
            db
              .selectFrom("user_group_subgroups as s")
              .innerJoin("groups as g", "g.id", "s.supergroup_id")
              .select("s.subgroup_id as id"),
          ),
    )
    .selectNoFrom((eb) => [
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
        .exists(
          eb
            .selectFrom("user_group_members as m")
            .innerJoin("groups as g", "g.id", "m.group_id")
            .innerJoin("users as u", "u.id", "m.user_id")
            .select("m.user_id")
            .where("m.user_id", "=", userId)
            .where("u.is_active", "=", true),
        )
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
