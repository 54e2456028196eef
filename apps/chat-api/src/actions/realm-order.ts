import type { Database } from "../db/database";
import { JsonableError } from "@repo/envelope";
import { sendLinkifiersEvent, sendProfileFieldsEvent } from "./realm-config";
import { lockLinkifiers, lockProfileFields } from "../db/queries/realms";

/**
 * Puts the realm's linkifiers in `ids` order, as Zulip checks it: no
 * duplicates, and exactly the existing set. One transaction, with the rows
 * locked, so two reorders cannot interleave.
 */
export async function doReorderLinkifiers(
  db: Database,
  realmId: number,
  ids: readonly number[],
): Promise<void> {
  if (new Set(ids).size < ids.length)
    throw new JsonableError("The ordered list must not contain duplicated linkifiers");
  await db.transaction(async (tx) => {
    const existing = new Set(await lockLinkifiers(tx, realmId));
    if (existing.size !== ids.length || ids.some((id) => !existing.has(id))) {
      throw new JsonableError(
        "The ordered list must enumerate all existing linkifiers exactly once",
      );
    }
    for (const [order, id] of ids.entries())
      await tx.prisma.linkifier.update({ where: { id }, data: { order } });
    await sendLinkifiersEvent(tx, realmId);
  });
}

/**
 * Puts the realm's custom profile fields in `ids` order, as Zulip does: every
 * existing field must be named (`Invalid order mapping.`); ids of no field
 * are ignored, and a repeated id takes its last position.
 */
export async function doReorderProfileFields(
  db: Database,
  realmId: number,
  ids: readonly number[],
): Promise<void> {
  const position = new Map(ids.map((id, index) => [id, index]));
  await db.transaction(async (tx) => {
    const ids = await lockProfileFields(tx, realmId);
    if (ids.some((id) => !position.has(id))) throw new JsonableError("Invalid order mapping.");
    for (const id of ids)
      await tx.prisma.customProfileField.update({
        where: { id },
        data: { order: position.get(id) ?? 0 },
      });
    await sendProfileFieldsEvent(tx, realmId);
  });
}
