import { realmStatusRows, setStatus, statusOf } from "../db/queries/user-settings";
import { activeUserIds } from "../db/queries/users";
import type { Tx } from "../db/kysely";
import type { Database } from "../db/database";
import { JsonableError } from "@repo/envelope";
import { sendEvent } from "../realtime/queue";
import type { AuthedUser } from "../caches/auth";
import { type ReactionType, resolveEmoji } from "./reactions";

/** Longest status text (Zulip's). */
export const MAX_STATUS_TEXT_LENGTH = 60;

/** What POST /users/me/status changes (undefined: unchanged). */
export interface StatusChange {
  statusText: string | undefined;
  emojiName: string | undefined;
  emojiCode: string | undefined;
  reactionType: ReactionType | undefined;
}

/** A user's status as `register`'s `user_status` and the `user_status` event give it. */
function statusView(row: {
  status_text: string;
  status_emoji_name: string;
  status_emoji_code: string;
  status_reaction_type: string;
}) {
  return {
    ...(row.status_text === "" ? {} : { status_text: row.status_text }),
    ...(row.status_emoji_name === ""
      ? {}
      : {
          emoji_name: row.status_emoji_name,
          emoji_code: row.status_emoji_code,
          reaction_type: row.status_reaction_type,
        }),
  };
}

/**
 * POST /users/me/status: sets or clears the caller's status text and emoji
 * (an empty `emoji_name` clears the emoji), with a `user_status` event to the
 * realm, in one transaction.
 */
export async function doSetStatus(
  db: Database,
  user: AuthedUser,
  change: StatusChange,
): Promise<void> {
  if (
    change.statusText === undefined &&
    change.emojiName === undefined &&
    change.emojiCode === undefined
  )
    throw new JsonableError("Client did not pass any new values.");
  const text = change.statusText?.trim();
  const emoji =
    change.emojiName === undefined
      ? undefined
      : change.emojiName === ""
        ? { name: "", code: "", type: "unicode_emoji" }
        : await resolveEmoji(db, user.realm_id, {
            emojiName: change.emojiName,
            emojiCode: change.emojiCode,
            reactionType: change.reactionType,
          });
  await db.transaction(async (tx) => {
    const row = await setStatus(tx, user.id, {
      ...(text === undefined ? {} : { status_text: text }),
      ...(emoji === undefined
        ? {}
        : {
            status_emoji_name: emoji.name,
            status_emoji_code: emoji.code,
            status_reaction_type: emoji.type,
          }),
    });
    await sendEvent(tx, await activeUserIds(tx, user.realm_id), {
      type: "user_status",
      user_id: user.id,
      ...(text === undefined ? {} : { status_text: text }),
      ...(emoji === undefined
        ? {}
        : { emoji_name: emoji.name, emoji_code: emoji.code, reaction_type: emoji.type }),
      ...(text === undefined && emoji === undefined ? statusView(row) : {}),
    });
  });
}

/** `register`'s `user_status`: the realm's users with a status, by id. */
export async function realmStatuses(tx: Tx, realmId: number) {
  const rows = await realmStatusRows(tx, realmId);
  return Object.fromEntries(rows.map((row) => [String(row.id), statusView(row)]));
}

/** GET /users/{user_id}/status (feature level 262): a user's status; `{}` when they set none. */
export async function userStatus(db: Database, viewer: AuthedUser, userId: number) {
  const row = await statusOf(db, viewer.realm_id, userId);
  if (row === undefined) throw new JsonableError("No such user");
  return statusView(row);
}
