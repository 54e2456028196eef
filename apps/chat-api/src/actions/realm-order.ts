import { JsonableError } from "@repo/envelope";
import type { PrismaClient } from "../gen/prisma/client";
import { sendLinkifiersEvent, sendProfileFieldsEvent } from "./realm-config";

/**
 * Puts the realm's linkifiers in `ids` order, as Zulip checks it: no
 * duplicates, and exactly the existing set. One transaction, with the rows
 * locked, so two reorders cannot interleave.
 */
export async function doReorderLinkifiers(
  prisma: PrismaClient,
  realmId: number,
  ids: readonly number[],
): Promise<void> {
  if (new Set(ids).size < ids.length)
    throw new JsonableError("The ordered list must not contain duplicated linkifiers");
  await prisma.$transaction(async (tx) => {
    const rows = await tx.$queryRaw<
      { id: number }[]
    >`SELECT id FROM linkifiers WHERE realm_id = ${realmId} FOR UPDATE`;
    const existing = new Set(rows.map((r) => r.id));
    if (existing.size !== ids.length || ids.some((id) => !existing.has(id))) {
      throw new JsonableError(
        "The ordered list must enumerate all existing linkifiers exactly once",
      );
    }
    for (const [order, id] of ids.entries())
      await tx.linkifier.update({ where: { id }, data: { order } });
    await sendLinkifiersEvent(tx, realmId);
  });
}

/**
 * Puts the realm's custom profile fields in `ids` order, as Zulip does: every
 * existing field must be named (`Invalid order mapping.`); ids of no field
 * are ignored, and a repeated id takes its last position.
 */
export async function doReorderProfileFields(
  prisma: PrismaClient,
  realmId: number,
  ids: readonly number[],
): Promise<void> {
  const position = new Map(ids.map((id, index) => [id, index]));
  await prisma.$transaction(async (tx) => {
    const rows = await tx.$queryRaw<{ id: number }[]>`
      SELECT id FROM custom_profile_fields WHERE realm_id = ${realmId} FOR UPDATE`;
    if (rows.some((r) => !position.has(r.id))) throw new JsonableError("Invalid order mapping.");
    for (const { id } of rows)
      await tx.customProfileField.update({ where: { id }, data: { order: position.get(id) ?? 0 } });
    await sendProfileFieldsEvent(tx, realmId);
  });
}
