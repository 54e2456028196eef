import type { Tx } from "../kysely";
import type { UserGroupRow } from "./user-groups";

// The system groups of a realm (`role:owners`...): made with the realm, never renamed.

/** Stores a realm's system group; answers its id. */
export async function insertSystemGroup(tx: Tx, realmId: number, name: string): Promise<number> {
  const group = await tx.prisma.userGroup.create({
    data: { realm_id: realmId, name, is_system_group: true, description: `System group ${name}` },
    select: { id: true },
  });
  return group.id;
}

/** Sets the permission settings of every system group of the realm at once. */
export async function setSystemGroupSettings(
  tx: Tx,
  realmId: number,
  settings: Omit<UserGroupRow, "realm_id" | "name" | "description" | "creator_id">,
): Promise<void> {
  await tx.prisma.userGroup.updateMany({
    where: { realm_id: realmId, is_system_group: true },
    data: settings,
  });
}

/** The realm's system groups. */
export function systemGroupsOf(tx: Tx, realmId: number) {
  return tx.prisma.userGroup.findMany({ where: { realm_id: realmId, is_system_group: true } });
}
