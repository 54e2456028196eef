import type { Tx } from "../kysely";

/** User `userId`'s saved snippets, oldest first. */
export function savedSnippetsOf(tx: Tx, userId: number) {
  return tx.prisma.savedSnippet.findMany({ where: { user_id: userId }, orderBy: { id: "asc" } });
}

/** How many saved snippets user `userId` keeps. */
export function savedSnippetCount(tx: Tx, userId: number): Promise<number> {
  return tx.prisma.savedSnippet.count({ where: { user_id: userId } });
}

/** A new saved snippet's columns. */
export interface NewSavedSnippet {
  realm_id: number;
  user_id: number;
  title: string;
  content: string;
}

/** Stores a saved snippet; answers it as stored. */
export function insertSavedSnippet(tx: Tx, row: NewSavedSnippet) {
  return tx.prisma.savedSnippet.create({ data: row });
}

/** User `userId`'s saved snippet `id`, or null. */
export function ownSavedSnippet(tx: Tx, userId: number, id: number) {
  return tx.prisma.savedSnippet.findFirst({ where: { id, user_id: userId } });
}

/** Changes saved snippet `id`; answers it as stored. */
export function updateSavedSnippet(
  tx: Tx,
  id: number,
  change: { title?: string; content?: string },
) {
  return tx.prisma.savedSnippet.update({ where: { id }, data: change });
}

/** Deletes saved snippet `id`. */
export async function deleteSavedSnippet(tx: Tx, id: number): Promise<void> {
  await tx.prisma.savedSnippet.delete({ where: { id } });
}
