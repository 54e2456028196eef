import type { Tx } from "../kysely";

/** The realm's code playgrounds, by id. */
export function playgroundsOf(tx: Tx, realmId: number) {
  return tx.prisma.realmPlayground.findMany({
    where: { realm_id: realmId },
    select: { id: true, name: true, pygments_language: true, url_template: true },
    orderBy: { id: "asc" },
  });
}

/** How many code playgrounds the realm has. */
export function playgroundCount(tx: Tx, realmId: number): Promise<number> {
  return tx.prisma.realmPlayground.count({ where: { realm_id: realmId } });
}

/** Stores a code playground of realm `realmId`; answers its id. */
export async function insertPlayground(
  tx: Tx,
  row: { realm_id: number; name: string; pygments_language: string; url_template: string },
): Promise<number> {
  return (await tx.prisma.realmPlayground.create({ data: row, select: { id: true } })).id;
}

/** Deletes the realm's code playground `id`; whether there was one. */
export async function deletePlayground(tx: Tx, realmId: number, id: number): Promise<boolean> {
  const { count } = await tx.prisma.realmPlayground.deleteMany({
    where: { id, realm_id: realmId },
  });
  return count > 0;
}
