import {
  channelPeers,
  lastPresenceUpdate,
  presenceAudience,
  type PresenceTimes,
  recentPresences,
  recordPresence,
  refreshPresence,
} from "../db/queries/presence";
import { activeUserIds } from "../db/queries/users";
import { botAndPresence } from "../db/queries/user-settings";
import type { Tx } from "../db/kysely";
import type { Database } from "../db/database";
import { sendEvent } from "../realtime/queue";
import type { AuthedUser } from "../caches/auth";
import { JsonText } from "../lib/json-text";
import type { PresenceBoards } from "../caches/presence-boards";
import { JsonableError } from "@repo/envelope";
import { hasRealmPermission } from "./user-groups";
import { findUsers } from "./user-lookup";

/** Presence older than this is not reported (Zulip's default history). */
export const PRESENCE_HISTORY_DAYS = 14;
/** The longest history a presence query may ask for: 1,000,000 days stays within what a date holds. */
export const MAX_HISTORY_DAYS = 1_000_000;

/** A client silent for this long counts as offline; coming back is a change others hear of. */
const OFFLINE_THRESHOLD_MS = 140_000;

/** Unix seconds. */
const seconds = (date: Date): number => Math.floor(date.getTime() / 1000);

/** The status a user last sent: active when their last report was "active". */
export function presenceStatus(p: PresenceTimes): "active" | "idle" {
  return p.last_active_time !== null && p.last_active_time >= p.last_connected_time
    ? "active"
    : "idle";
}

/** The legacy (spec) form of one user's presence: `website` and `aggregated`. */
export function legacyPresence(p: PresenceTimes) {
  const entry = {
    client: "website",
    status: presenceStatus(p),
    timestamp: seconds(p.last_connected_time),
  };
  return { website: { ...entry, pushable: false }, aggregated: entry };
}

/**
 * Records the caller's presence (`active` updates both times, `idle` only the
 * connection time) with a new update number: in one statement when nothing
 * changes that others hear of. When the status changed or the user was
 * offline, the realm hears a `presence` event unless its audience is over
 * `eventsUserLimit` (Zulip's rule: such events cost quadratic work in big
 * realms, whose clients ping every minute): the audience is read first, and
 * the change is one more statement past the limit, else a transaction with
 * its event.
 */
export async function doUpdatePresence(
  db: Database,
  user: AuthedUser,
  status: "active" | "idle",
  limits: { limitToAccessible: boolean; eventsUserLimit: number },
): Promise<void> {
  const now = new Date();
  const active = status === "active";
  // Most pings change nothing others hear of: one statement, no transaction of their own.
  if (await refreshPresence(db, user, now, active, OFFLINE_THRESHOLD_MS)) return;
  // One more than the limit tells "past it" without reading a large realm's every user.
  const atMost = limits.eventsUserLimit + 1;
  const audience = limits.limitToAccessible
    ? await presenceAudience(db, user.realm_id, user.id, atMost)
    : await activeUserIds(db, user.realm_id, atMost);
  if (audience.length > limits.eventsUserLimit) {
    await recordPresence(db, user, now, active);
    return;
  }
  await db.transaction(async (tx) => {
    const { before, after } = await recordPresence(tx, user, now, active);
    const changed =
      before === undefined ||
      presenceStatus(before) !== status ||
      now.getTime() - before.last_connected_time.getTime() > OFFLINE_THRESHOLD_MS;
    if (!changed) return;
    await sendEvent(tx, audience, {
      type: "presence",
      user_id: user.id,
      email: user.email,
      server_timestamp: now.getTime() / 1000,
      presence: { website: legacyPresence(after).website },
    });
  });
}

/** Which presence rows a viewer gets. */
export interface PresenceQuery {
  /** CAN_ACCESS_ALL_USERS_GROUP_LIMITS_PRESENCE: only users the viewer can access. */
  limitToAccessible: boolean;
  /** Only changes numbered after this (modern clients). */
  afterUpdateId?: number;
  historyDays?: number;
}

/** The earliest connection time a presence query reports. */
const sinceOf = (query: PresenceQuery): Date =>
  new Date(Date.now() - (query.historyDays ?? PRESENCE_HISTORY_DAYS) * 86_400_000);

/**
 * The realm's presence rows a viewer may see: users seen in the history
 * window, without bots and deactivated users; with the server setting on, a
 * viewer outside the realm's `can_access_all_users_group` sees only the users
 * they share a channel with, and themself.
 */
export async function realmPresences(
  tx: Tx,
  viewer: AuthedUser,
  query: PresenceQuery,
): Promise<Awaited<ReturnType<typeof recentPresences>>> {
  // Kysely: every client polls this, and Prisma's per-row cost was most of its time.
  const rows = await recentPresences(tx, viewer.realm_id, sinceOf(query), query.afterUpdateId);
  const accessible = await presenceAccess(tx, viewer, query.limitToAccessible);
  return accessible === "everyone" ? rows : rows.filter((row) => accessible.has(row.user_id));
}

/**
 * {@link realmPresences} in the modern form (`last_update_id` clients): the
 * `presences` object as JSON text, and the realm's newest update number
 * (`presence_last_update_id`), from this replica's board of the realm.
 */
export async function realmPresenceTimes(
  tx: Tx,
  boards: PresenceBoards,
  viewer: AuthedUser,
  query: PresenceQuery,
): Promise<{ presences: JsonText; lastUpdateId: number }> {
  const accessible = await presenceAccess(tx, viewer, query.limitToAccessible);
  const found = await boards.answer(viewer.realm_id, {
    after: query.afterUpdateId,
    sinceMs: sinceOf(query).getTime(),
    only: accessible === "everyone" ? undefined : accessible,
  });
  return { presences: new JsonText(found.json), lastUpdateId: found.newest };
}

/**
 * Whose presence `viewer` may see: everyone, unless the server setting limits
 * a viewer outside the realm's `can_access_all_users_group` to the users
 * they share a channel with, and themself.
 */
async function presenceAccess(
  tx: Tx,
  viewer: AuthedUser,
  limitToAccessible: boolean,
): Promise<Set<number> | "everyone"> {
  if (!limitToAccessible) return "everyone";
  if (await hasRealmPermission(tx, viewer.realm_id, "can_access_all_users_group_id", viewer.id))
    return "everyone";
  return new Set([viewer.id, ...(await channelPeers(tx, viewer.id))]);
}

/** The newest presence update number of the realm (`presence_last_update_id`). */
export async function lastPresenceUpdateId(tx: Tx, realmId: number): Promise<number> {
  return lastPresenceUpdate(tx, realmId);
}

/**
 * GET /users/{user_id_or_email}/presence: one user's last reported presence
 * (by id or address), as Zulip's per-user form gives it; `No such user` for
 * anyone the viewer may not see, bots have none.
 */
export async function userPresence(
  db: Database,
  viewer: AuthedUser,
  ref: string,
  limitToAccessible: boolean,
) {
  const [target] = await findUsers(
    db,
    viewer.realm_id,
    [/^\d{1,10}$/.test(ref) ? Number(ref) : ref],
    () => {
      throw new JsonableError("No such user");
    },
  );
  if (target === undefined) throw new JsonableError("No such user");
  const row = await botAndPresence(db, target.id);
  if (row.is_bot) throw new JsonableError("Presence is not supported for bot users.");
  const accessible = await presenceAccess(db, viewer, limitToAccessible);
  const visible = accessible === "everyone" || accessible.has(target.id);
  if (row.presence === null || !visible) throw new JsonableError(`No presence data for ${ref}`);
  const entry = {
    status: presenceStatus(row.presence),
    timestamp: seconds(row.presence.last_connected_time),
  };
  return { presence: { website: entry, aggregated: entry } };
}
