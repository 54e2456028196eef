import { JsonableError } from "@repo/envelope";
import type { Database } from "../db/database";
import type { Tx } from "../db/kysely";
import { deleteMute, insertMute, muteCount, mutesOf } from "../db/queries/muted-users";
import { markReadWithEvent } from "../db/queries/flags";
import { isRealmUser, lockUser } from "../db/queries/users";
import type { AuthedUser } from "../caches/auth";
import { MESSAGE_FLAGS } from "../lib/message-flag-bits";
import { sendEvent } from "../realtime/queue";
import { changeWithItsEvent, flagsEvent } from "./message-flags";
import { checkCap } from "./caps";

/** The user's muted users as register and the `muted_users` event give them. */
export async function listMutedUsers(tx: Tx, userId: number) {
  const rows = await mutesOf(tx, userId);
  return rows.map((r) => ({
    id: r.muted_user_id,
    timestamp: Math.floor(new Date(r.date_muted).getTime() / 1000),
  }));
}

/** Zulip's answer for a user the caller cannot name (another realm's, or none). */
async function checkUser(tx: Tx, user: AuthedUser, userId: number): Promise<void> {
  // Bots and deactivated users can be muted, as in Zulip.
  if (!(await isRealmUser(tx, user.realm_id, userId))) throw new JsonableError("No such user");
}

/**
 * POST /users/me/muted_users/{id}: the caller mutes a user of the realm. Their
 * unread messages from that user become read (with the flags event), later
 * ones arrive read, and the caller's clients get the new list (`muted_users`),
 * all in one transaction.
 */
export async function doMuteUser(
  db: Database,
  user: AuthedUser,
  mutedId: number,
  cap: number,
): Promise<void> {
  if (mutedId === user.id) throw new JsonableError("Cannot mute self");
  await checkUser(db, user, mutedId);
  await db.transaction(async (tx) => {
    // The caller's row lock: two mutes at once cannot both pass the cap.
    await lockUser(tx, user.id);
    checkCap(await muteCount(tx, user.id), 1, cap, "muted users");
    if (!(await insertMute(tx, user.id, mutedId, new Date())))
      throw new JsonableError("User already muted");
    await changeWithItsEvent(tx, user.id, flagsEvent("add", "read"), (row) =>
      markReadWithEvent(tx, MESSAGE_FLAGS.read, user.id, { senderId: mutedId }, row),
    );
    await sendMutedUsersEvent(tx, user.id);
  });
}

/** DELETE /users/me/muted_users/{id}: the caller unmutes a user; `muted_users` to their clients. */
export async function doUnmuteUser(db: Database, user: AuthedUser, mutedId: number): Promise<void> {
  await checkUser(db, user, mutedId);
  await db.transaction(async (tx) => {
    if (!(await deleteMute(tx, user.id, mutedId))) throw new JsonableError("User is not muted");
    await sendMutedUsersEvent(tx, user.id);
  });
}

async function sendMutedUsersEvent(tx: Tx, userId: number): Promise<void> {
  await sendEvent(tx, [userId], {
    type: "muted_users",
    muted_users: await listMutedUsers(tx, userId),
  });
}
