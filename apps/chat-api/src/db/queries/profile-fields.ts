import type { Tx } from "../kysely";

/** How many of the realm's profile fields are shown in the profile summary. */
export function summaryFieldCount(tx: Tx, realmId: number): Promise<number> {
  return tx.prisma.customProfileField.count({
    where: { realm_id: realmId, display_in_profile_summary: true },
  });
}

/** Whether the realm has a profile field named `name`. */
export async function profileFieldNameTaken(
  tx: Tx,
  realmId: number,
  name: string,
): Promise<boolean> {
  return (await tx.prisma.customProfileField.count({ where: { realm_id: realmId, name } })) > 0;
}

/** A new custom profile field's columns. */
export interface NewProfileField {
  realm_id: number;
  name: string;
  hint: string;
  field_type: number;
  field_data: string;
  order: number;
  display_in_profile_summary: boolean;
  required: boolean;
  editable_by_user: boolean;
}

/** Stores a custom profile field; answers its id. */
export async function insertProfileField(tx: Tx, row: NewProfileField): Promise<number> {
  return (await tx.prisma.customProfileField.create({ data: row, select: { id: true } })).id;
}

/** The realm's custom profile fields in their order. */
export function profileFieldsOf(tx: Tx, realmId: number) {
  return tx.prisma.customProfileField.findMany({
    where: { realm_id: realmId },
    orderBy: [{ order: "asc" }, { id: "asc" }],
  });
}

/** The realm's custom profile fields among `ids`. */
export function profileFieldsAmong(tx: Tx, realmId: number, ids: readonly number[]) {
  return tx.prisma.customProfileField.findMany({
    where: { realm_id: realmId, id: { in: [...ids] } },
  });
}

/** A user's value of a custom profile field, as stored. */
export interface ProfileValueRow {
  field_id: number;
  value: string;
  rendered_value: string | null;
}

/** Sets user `userId`'s values of the fields of `rows`, in one statement. */
export async function upsertProfileValues(
  tx: Tx,
  userId: number,
  rows: readonly ProfileValueRow[],
): Promise<void> {
  if (rows.length === 0) return;
  await tx.q
    .insertInto("custom_profile_field_values")
    .values(rows.map((row) => ({ ...row, user_id: userId })))
    .onConflict((oc) =>
      oc.columns(["user_id", "field_id"]).doUpdateSet((eb) => ({
        value: eb.ref("excluded.value"),
        rendered_value: eb.ref("excluded.rendered_value"),
      })),
    )
    .execute();
}

/** Removes user `userId`'s values of fields `fieldIds`; answers the ids of those it removed. */
export async function deleteProfileValues(
  tx: Tx,
  userId: number,
  fieldIds: readonly number[],
): Promise<number[]> {
  if (fieldIds.length === 0) return [];
  const rows = await tx.q
    .deleteFrom("custom_profile_field_values")
    .where("user_id", "=", userId)
    .where("field_id", "in", fieldIds)
    .returning("field_id")
    .execute();
  return rows.map((r) => r.field_id);
}

/** User `userId`'s stored values of fields `fieldIds`. */
export function profileValuesOf(tx: Tx, userId: number, fieldIds: readonly number[]) {
  return tx.prisma.customProfileFieldValue.findMany({
    where: { user_id: userId, field_id: { in: [...fieldIds] } },
    select: { field_id: true, value: true, rendered_value: true },
  });
}
