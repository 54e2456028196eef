import type { Tx } from "../kysely";

/** Whether the realm has a linkifier of this exact pattern. */
export async function linkifierPatternTaken(
  tx: Tx,
  realmId: number,
  pattern: string,
): Promise<boolean> {
  return (await tx.prisma.linkifier.count({ where: { realm_id: realmId, pattern } })) > 0;
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
