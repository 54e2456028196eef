import type { Tx } from "../kysely";

/** Whether the realm has a linkifier of this exact pattern (other than `exceptId`). */
export async function linkifierPatternTaken(
  tx: Tx,
  realmId: number,
  pattern: string,
  exceptId?: number,
): Promise<boolean> {
  const count = await tx.prisma.linkifier.count({
    where: {
      realm_id: realmId,
      pattern,
      ...(exceptId === undefined ? {} : { id: { not: exceptId } }),
    },
  });
  return count > 0;
}

/** A new linkifier's columns. */
export interface NewLinkifier {
  realm_id: number;
  pattern: string;
  url_template: string;
  order: number;
}

/** Stores a linkifier; answers its id. */
export async function insertLinkifier(tx: Tx, row: NewLinkifier): Promise<number> {
  return (await tx.prisma.linkifier.create({ data: row, select: { id: true } })).id;
}

/** Deletes the realm's linkifier `id`; whether there was one. */
export async function deleteLinkifier(tx: Tx, realmId: number, id: number): Promise<boolean> {
  const { count } = await tx.prisma.linkifier.deleteMany({ where: { id, realm_id: realmId } });
  return count > 0;
}

/** The realm's linkifiers in their order. */
export function linkifiersOf(tx: Tx, realmId: number) {
  return tx.prisma.linkifier.findMany({
    where: { realm_id: realmId },
    orderBy: [{ order: "asc" }, { id: "asc" }],
  });
}

/** Changes the realm's linkifier `id`; whether there was one. */
export async function updateLinkifier(
  tx: Tx,
  realmId: number,
  id: number,
  change: { pattern: string; url_template: string },
): Promise<boolean> {
  const { count } = await tx.prisma.linkifier.updateMany({
    where: { id, realm_id: realmId },
    data: change,
  });
  return count > 0;
}
