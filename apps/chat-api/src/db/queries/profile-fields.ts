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
