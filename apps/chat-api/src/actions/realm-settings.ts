import { activeUserIds } from "../db/queries/users";
import { realmById, updateRealm } from "../db/queries/realms";
import { JsonableError } from "@repo/envelope";
import { sendEvent } from "../realtime/queue";
import type { AuthedUser } from "../caches/auth";
import type { DatabaseAndBus } from "../caches/cache-bus";
import { codePoints } from "../lib/text";

/** An organization name's longest length (Zulip's `MAX_REALM_NAME_LENGTH`). */
export const MAX_REALM_NAME_LENGTH = 40;

/**
 * PATCH /realm's `name` (administrators): renames the organization in one
 * transaction with a `realm` `update` event to its people; every replica's
 * cached realm row is dropped, so register's `realm_name` follows at once.
 */
export async function doSetRealmName(
  { db, bus }: DatabaseAndBus,
  actor: AuthedUser,
  name: string,
): Promise<void> {
  const trimmed = name.trim();
  if (trimmed === "") throw new JsonableError("Organization name can't be empty.");
  if (codePoints(trimmed) > MAX_REALM_NAME_LENGTH)
    throw new JsonableError("Organization name is too long.");
  const changed = await db.transaction(async (tx) => {
    if ((await realmById(tx, actor.realm_id)).name === trimmed) return false;
    await updateRealm(tx, actor.realm_id, { name: trimmed });
    await sendEvent(tx, await activeUserIds(tx, actor.realm_id), {
      type: "realm",
      op: "update",
      property: "name",
      value: trimmed,
    });
    await bus.announce(tx, { realm: actor.realm_id });
    return true;
  });
  if (changed) bus.apply({ realm: actor.realm_id });
}
