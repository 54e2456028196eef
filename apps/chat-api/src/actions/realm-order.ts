import type { Database } from "../db/database";
import { JsonableError } from "@repo/envelope";
import { sendLinkifiersEvent } from "./realm-linkifiers";
import { sendProfileFieldsEvent } from "./custom-profile-fields";
import { lockOrderedRows, setRowOrder } from "../db/queries/realms";

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
    const existing = new Set(await lockOrderedRows(tx, "linkifiers", realmId));
    if (existing.size !== ids.length || ids.some((id) => !existing.has(id))) {
      throw new JsonableError(
        "The ordered list must enumerate all existing linkifiers exactly once",
      );
    }
    await setRowOrder(tx, "linkifiers", realmId, positionsOf(ids));
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
  const position = positionsOf(ids);
  await db.transaction(async (tx) => {
    const existing = await lockOrderedRows(tx, "custom_profile_fields", realmId);
    if (existing.some((id) => !position.has(id))) throw new JsonableError("Invalid order mapping.");
    await setRowOrder(
      tx,
      "custom_profile_fields",
      realmId,
      new Map(existing.map((id) => [id, position.get(id) ?? 0])),
    );
    await sendProfileFieldsEvent(tx, realmId);
  });
}

/** Each id's position in `ids`, from 0 (a repeated id: its last). */
export function positionsOf(ids: readonly number[]): Map<number, number> {
  return new Map(ids.map((id, index) => [id, index]));
}
