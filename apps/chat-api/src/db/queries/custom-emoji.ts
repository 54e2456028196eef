import type { Tx } from "../kysely";

/** The realm's custom emoji by id, deactivated ones included. */
export function customEmojiOf(tx: Tx, realmId: number) {
  return tx.prisma.customEmoji.findMany({ where: { realm_id: realmId }, orderBy: { id: "asc" } });
}

/** The realm's live custom emoji named `names`. */
export function liveCustomEmojiNamed(tx: Tx, realmId: number, names: readonly string[]) {
  return tx.prisma.customEmoji.findMany({
    where: { realm_id: realmId, deactivated: false, name: { in: [...names] } },
    select: { id: true, name: true, path_id: true },
  });
}

/** The realm's live custom emoji named `name`, or null. */
export function liveCustomEmojiByName(tx: Tx, realmId: number, name: string) {
  return tx.prisma.customEmoji.findFirst({
    where: { realm_id: realmId, name, deactivated: false },
  });
}

/** How many custom emoji the realm has, deactivated ones included. */
export function customEmojiCount(tx: Tx, realmId: number): Promise<number> {
  return tx.prisma.customEmoji.count({ where: { realm_id: realmId } });
}

/** A new custom emoji's columns. */
export interface NewCustomEmoji {
  realm_id: number;
  name: string;
  author_id: number;
  path_id: string;
  content_type: string;
}

/** Stores a custom emoji. */
export async function insertCustomEmoji(tx: Tx, row: NewCustomEmoji): Promise<void> {
  await tx.prisma.customEmoji.create({ data: row });
}

/** Deactivates custom emoji `id`. */
export async function deactivateCustomEmoji(tx: Tx, id: number): Promise<void> {
  await tx.prisma.customEmoji.update({ where: { id }, data: { deactivated: true } });
}

/** The custom emoji image stored at `pathId`: what serving it needs; undefined if none. */
export async function customEmojiByPath(tx: Tx, pathId: string) {
  const row = await tx.prisma.customEmoji.findUnique({
    where: { path_id: pathId },
    select: { path_id: true, content_type: true },
  });
  return row ?? undefined;
}

/** The realm's custom emoji `id` (live or not), or null. */
export function customEmojiById(tx: Tx, realmId: number, id: number) {
  return tx.prisma.customEmoji.findFirst({ where: { id, realm_id: realmId } });
}
