import { type Kysely, sql } from "kysely";
import type { DB } from "../../gen/kysely/tables";
import type { Tx } from "../kysely";

/** A user's presence times (before and after {@link recordPresence}): what its status and legacy form are made of. */
export interface PresenceTimes {
  last_connected_time: Date;
  last_active_time: Date | null;
}

/**
 * Records `user`'s ping at `now` when others would hear nothing of it: a
 * stored presence with the same status (`active` or not) and a connection
 * time no older than `offlineMs`. One statement, its own transaction (the
 * row's lock makes the test and the write one step); the times and the
 * update number change as {@link recordPresence} changes them. Returns
 * whether it did; if not, the caller records the change with its event.
 */
export async function refreshPresence(
  tx: Tx,
  user: { id: number },
  now: Date,
  active: boolean,
  offlineMs: number,
): Promise<boolean> {
  const result = await tx.q
    .updateTable("presences")
    .set({
      last_connected_time: now,
      ...(active ? { last_active_time: now } : {}),
    })
    .where("user_id", "=", user.id)
    .where("last_connected_time", ">=", new Date(now.getTime() - offlineMs))
    .where((eb) => {
      const wasActive = eb.and([
        eb("last_active_time", "is not", null),
        eb("last_active_time", ">=", eb.ref("last_connected_time")),
      ]);
      return active ? wasActive : eb.not(wasActive);
    })
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/**
 * Records `userId`'s presence at `now` in one statement: the connection
 * time, the activity time too when `active` (else the stored one, or none);
 * the row takes the next number of the realm-wide `last_update_id` counter
 * (trigger `presences_write`, as at every write of the row). Returns
 * the times before (undefined for a first presence) and after.
 */
export async function recordPresence(
  tx: Tx,
  user: { id: number; realm_id: number },
  now: Date,
  active: boolean,
): Promise<{ before: PresenceTimes | undefined; after: PresenceTimes }> {
  const row = await tx.q
    .with("before", (db) =>
      db
        .selectFrom("presences")
        .select(["last_connected_time", "last_active_time"])
        .where("user_id", "=", user.id),
    )
    .with("after", (db) =>
      db
        .insertInto("presences")
        .values({
          user_id: user.id,
          realm_id: user.realm_id,
          last_connected_time: now,
          last_active_time: active ? now : null,
        })
        .onConflict((oc) =>
          oc.column("user_id").doUpdateSet((eb) => ({
            last_connected_time: eb.ref("excluded.last_connected_time"),
            last_active_time: active
              ? eb.ref("excluded.last_active_time")
              : eb.ref("presences.last_active_time"),
          })),
        )
        .returning(["last_connected_time", "last_active_time"]),
    )
    .selectFrom("after")
    .leftJoin("before", (join) => join.onTrue())
    .select([
      "after.last_connected_time",
      "after.last_active_time",
      "before.last_connected_time as before_connected_time",
      "before.last_active_time as before_active_time",
    ])
    .executeTakeFirstOrThrow();
  return {
    before:
      row.before_connected_time === null
        ? undefined
        : {
            last_connected_time: row.before_connected_time,
            last_active_time: row.before_active_time,
          },
    after: { last_connected_time: row.last_connected_time, last_active_time: row.last_active_time },
  };
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

/** `last_update_id`, a bigint column, as a JS number (exact below 2^53). */
const updateIdAsNumber = sql<number>`p.last_update_id::float8`.as("last_update_id");

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
      query.where("p.last_update_id", ">", String(afterUpdateId ?? 0)),
    );
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
  return recentRows(q, realmId, since, afterUpdateId)
    .select([
      "p.user_id",
      "p.realm_id",
      "p.last_connected_time",
      "p.last_active_time",
      updateIdAsNumber,
      "u.email",
    ])
    .orderBy("p.user_id");
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

/** A presence row as a replica's board of the realm holds it (`PresenceBoards`). */
export interface BoardRow {
  user_id: number;
  last_update_id: number;
  /** `last_connected_time` in milliseconds since the epoch. */
  connected_ms: number;
  /** The row's entry of the modern answer (trigger `presences_write`). */
  slim_entry: string;
  /** Whether presence answers show it: the user is active and not a bot. */
  shown: boolean;
}

/**
 * The presence rows of realm `realmId` numbered after `after` (-1: all),
 * but those numbered `known` (rows a board already holds), bots and
 * deactivated users included (marked `shown: false`): what a replica's board
 * of the realm reads to catch up.
 */
export async function boardRowsAfter(
  tx: Tx,
  realmId: number,
  after: number,
  known: readonly number[],
): Promise<BoardRow[]> {
  return tx.q
    .selectFrom("presences as p")
    .innerJoin("users as u", "u.id", "p.user_id")
    .select([
      "p.user_id",
      updateIdAsNumber,
      "p.slim_entry",
      sql<number>`(extract(epoch FROM p.last_connected_time) * 1000)::float8`.as("connected_ms"),
      sql<boolean>`u.is_active AND NOT u.is_bot`.as("shown"),
    ])
    .where("p.realm_id", "=", realmId)
    .where("p.last_update_id", ">", String(after))
    .$if(known.length > 0, (query) =>
      query.where("p.last_update_id", "!=", sql<string>`ALL(${[...known]}::bigint[])`),
    )
    .execute();
}

/** The newest presence update number of the realm (-1 before any). */
export async function lastPresenceUpdate(tx: Tx, realmId: number): Promise<number> {
  const row = await tx.prisma.presence.aggregate({
    where: { realm_id: realmId },
    _max: { last_update_id: true },
  });
  // A bigint column; its numbers stay far below 2^53.
  return Number(row._max.last_update_id ?? -1);
}
