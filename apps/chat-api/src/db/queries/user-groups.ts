import { sql } from "kysely";
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
 * (A function of type void is read as text: Prisma's raw query reads no void column.)
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
