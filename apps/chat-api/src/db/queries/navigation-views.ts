import type { Tx } from "../kysely";

/** User `userId`'s navigation views, in the order they were made. */
export function navigationViewsOf(tx: Tx, userId: number) {
  return tx.prisma.navigationView.findMany({ where: { user_id: userId }, orderBy: { id: "asc" } });
}

/** How many navigation views user `userId` keeps. */
export function navigationViewCount(tx: Tx, userId: number): Promise<number> {
  return tx.prisma.navigationView.count({ where: { user_id: userId } });
}

/** User `userId`'s view of `fragment`, or null. */
export function navigationViewOf(tx: Tx, userId: number, fragment: string) {
  return tx.prisma.navigationView.findUnique({
    where: { user_id_fragment: { user_id: userId, fragment } },
  });
}

/** Whether user `userId` has a view named `name`. */
export async function hasNavigationViewNamed(
  tx: Tx,
  userId: number,
  name: string,
): Promise<boolean> {
  return (await tx.prisma.navigationView.count({ where: { user_id: userId, name } })) > 0;
}

/** Stores a view; answers it as stored. */
export function insertNavigationView(
  tx: Tx,
  row: { user_id: number; fragment: string; is_pinned: boolean; name: string | null },
) {
  return tx.prisma.navigationView.create({ data: row });
}

/** Changes view `id`. */
export async function updateNavigationView(
  tx: Tx,
  id: number,
  change: { is_pinned?: boolean; name?: string },
): Promise<void> {
  await tx.prisma.navigationView.update({ where: { id }, data: change });
}

/** Deletes view `id`. */
export async function deleteNavigationView(tx: Tx, id: number): Promise<void> {
  await tx.prisma.navigationView.delete({ where: { id } });
}
