import type { Prisma } from "../../gen/prisma/client";
import type { Tx } from "../kysely";

/** The user's legacy pointer (-1 before any). */
export async function pointerOf(tx: Tx, userId: number): Promise<number> {
  const user = await tx.prisma.user.findUniqueOrThrow({
    where: { id: userId },
    select: { pointer: true },
  });
  return user.pointer;
}

/** Moves the user's pointer to `pointer` if it is further. */
export async function advancePointer(tx: Tx, userId: number, pointer: number): Promise<void> {
  await tx.prisma.user.updateMany({
    where: { id: userId, pointer: { lt: pointer } },
    data: { pointer },
  });
}

/** Whether user `userId` keeps drafts synchronized across clients. */
export async function syncsDrafts(tx: Tx, userId: number): Promise<boolean> {
  const user = await tx.prisma.user.findUniqueOrThrow({
    where: { id: userId },
    select: { enable_drafts_synchronization: true },
  });
  return user.enable_drafts_synchronization;
}

/** Sets columns of user `userId`'s settings and their JSON document of the rest. */
export async function updateUserSettings(
  tx: Tx,
  userId: number,
  columns: Record<string, string | number | boolean>,
  settings: Prisma.InputJsonObject,
): Promise<void> {
  await tx.prisma.user.update({ where: { id: userId }, data: { ...columns, settings } });
}

/** Renames user `userId`. */
export async function setFullName(tx: Tx, userId: number, fullName: string): Promise<void> {
  await tx.prisma.user.update({ where: { id: userId }, data: { full_name: fullName } });
}

/** A status change: its text, its emoji, or both. */
export interface StatusChange {
  status_text?: string;
  status_emoji_name?: string;
  status_emoji_code?: string;
  status_reaction_type?: string;
}

/** Sets user `userId`'s status; answers the whole status as stored. */
export function setStatus(tx: Tx, userId: number, change: StatusChange) {
  return tx.prisma.user.update({
    where: { id: userId },
    data: change,
    select: {
      status_text: true,
      status_emoji_name: true,
      status_emoji_code: true,
      status_reaction_type: true,
    },
  });
}

/** The realm's active users who have a status, by id, with it. */
export function realmStatusRows(tx: Tx, realmId: number) {
  return tx.prisma.user.findMany({
    where: {
      realm_id: realmId,
      is_active: true,
      OR: [{ status_text: { not: "" } }, { status_emoji_name: { not: "" } }],
    },
    select: {
      id: true,
      status_text: true,
      status_emoji_name: true,
      status_emoji_code: true,
      status_reaction_type: true,
    },
    orderBy: { id: "asc" },
  });
}

/** Whether user `userId` is a bot, and their presence row (or null). */
export function botAndPresence(tx: Tx, userId: number) {
  return tx.prisma.user.findUniqueOrThrow({
    where: { id: userId },
    select: { is_bot: true, presence: true },
  });
}

/** What rendering needs of the author's settings, or null if they are gone. */
export function authorSettingsRow(tx: Tx, userId: number) {
  return tx.prisma.user.findUnique({
    where: { id: userId },
    select: { timezone: true, enable_drafts_synchronization: true, settings: true },
  });
}

/** The status of the realm's user `userId` (active or not), or undefined if there is no such user. */
export async function statusOf(tx: Tx, realmId: number, userId: number) {
  const row = await tx.prisma.user.findFirst({
    where: { id: userId, realm_id: realmId },
    select: {
      status_text: true,
      status_emoji_name: true,
      status_emoji_code: true,
      status_reaction_type: true,
    },
  });
  return row ?? undefined;
}
