import { type Kysely, sql } from "kysely";
import type { DB } from "../../gen/kysely/tables";
import type { Tx } from "../kysely";

/** The next presence update number (the realm-wide `last_update_id` counter). */
export async function nextPresenceUpdateId(tx: Tx): Promise<number> {
  const row = await tx.q
    .selectNoFrom((eb) =>
      eb.cast<number>(eb.fn("nextval", [eb.val("presence_update_id_seq")]), "integer").as("id"),
    )
    .executeTakeFirstOrThrow();
  return row.id;
}

/** The users who share an active subscription to a channel with `userId`. */
export async function channelPeers(tx: Tx, userId: number): Promise<number[]> {
  const rows = await tx.q
    .selectFrom("subscriptions as mine")
    .innerJoin("subscriptions as other", (join) =>
      join.onRef("other.channel_id", "=", "mine.channel_id").on("other.active", "=", true),
    )
    .select("other.user_id")
    .distinct()
    .where("mine.user_id", "=", userId)
    .where("mine.active", "=", true)
    .execute();
  return rows.map((r) => r.user_id);
}

/**
 * Who may see `subjectId`'s presence: the active users of the realm in its
 * `can_access_all_users_group` (at any depth), those who share a channel with
 * the subject, and the subject; at most `atMost` of them.
 */
export async function presenceAudience(
  tx: Tx,
  realmId: number,
  subjectId: number,
  atMost: number,
): Promise<number[]> {
  const rows = await tx.q
    .withRecursive("groups(id)", (db) =>
      db
        .selectFrom("realms")
        .select("can_access_all_users_group_id as id")
        .where("id", "=", realmId)
        .union(
          db
            .selectFrom("user_group_subgroups as s")
            .innerJoin("groups as g", "g.id", "s.supergroup_id")
            .select("s.subgroup_id as id"),
        ),
    )
    .selectFrom("users as u")
    .select("u.id")
    .where("u.realm_id", "=", realmId)
    .where("u.is_active", "=", true)
    .where((eb) =>
      eb.or([
        eb("u.id", "=", subjectId),
        eb.exists(
          eb
            .selectFrom("user_group_members as m")
            .innerJoin("groups as g", "g.id", "m.group_id")
            .select("m.group_id")
            .whereRef("m.user_id", "=", "u.id"),
        ),
        eb.exists(
          eb
            .selectFrom("subscriptions as mine")
            .innerJoin("subscriptions as other", (join) =>
              join.onRef("other.channel_id", "=", "mine.channel_id").on("other.active", "=", true),
            )
            .select("mine.user_id")
            .where("mine.user_id", "=", subjectId)
            .where("mine.active", "=", true)
            .whereRef("other.user_id", "=", "u.id"),
        ),
      ]),
    )
    .limit(atMost)
    .execute();
  return rows.map((r) => r.id);
}

/** The rows of {@link realmPresencesQuery}: the realm's recent presences, without bots and deactivated users. */
function recentRows(
  q: Kysely<DB>,
  realmId: number,
  since: Date,
  afterUpdateId: number | undefined,
) {
  return q
    .selectFrom("presences as p")
    .innerJoin("users as u", "u.id", "p.user_id")
    .where("p.realm_id", "=", realmId)
    .where("p.last_connected_time", ">=", since)
    .where("u.is_active", "=", true)
    .where("u.is_bot", "=", false)
    .$if(afterUpdateId !== undefined, (query) =>
      query.where("p.last_update_id", ">", afterUpdateId ?? 0),
    )
    .orderBy("p.user_id");
}

/**
 * The presences of realm `realmId` seen since `since` (changed after update
 * `afterUpdateId`, if given), without bots and deactivated users, with emails.
 */
export function realmPresencesQuery(
  q: Kysely<DB>,
  realmId: number,
  since: Date,
  afterUpdateId: number | undefined,
) {
  return recentRows(q, realmId, since, afterUpdateId).select([
    "p.user_id",
    "p.realm_id",
    "p.last_connected_time",
    "p.last_active_time",
    "p.last_update_id",
    "u.email",
  ]);
}

/** {@link realmPresencesQuery}, run on `tx`. */
export function recentPresences(
  tx: Tx,
  realmId: number,
  since: Date,
  afterUpdateId: number | undefined,
) {
  return realmPresencesQuery(tx.q, realmId, since, afterUpdateId).execute();
}

/**
 * The same presences in the modern form, as Unix seconds computed by the
 * database: every client of a big realm asks for them each minute, and
 * parsing two timestamps a row was most of the cost.
 */
export function recentPresenceTimes(
  tx: Tx,
  realmId: number,
  since: Date,
  afterUpdateId: number | undefined,
) {
  return recentRows(tx.q, realmId, since, afterUpdateId)
    .select([
      "p.user_id",
      sql<number>`coalesce(floor(extract(epoch FROM p.last_active_time)), 0)::int`.as(
        "active_timestamp",
      ),
      sql<number>`floor(extract(epoch FROM p.last_connected_time))::int`.as("idle_timestamp"),
    ])
    .execute();
}
