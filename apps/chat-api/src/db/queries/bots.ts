import type { Tx } from "../kysely";
import { caselessEquals } from "./text";

/** Ids of a user's active bots. */
export async function activeBotIds(tx: Tx, ownerId: number): Promise<number[]> {
  const rows = await tx.prisma.user.findMany({
    where: { bot_owner_id: ownerId, is_bot: true, is_active: true },
    select: { id: true },
  });
  return rows.map((r) => r.id);
}

/** The realm's active notification bot (its system bot), or null. */
export function notificationBot(tx: Tx, realmId: number) {
  return tx.prisma.user.findFirst({
    where: { realm_id: realmId, is_system_bot: true, is_active: true },
  });
}

/** Ids of the realm's system bots, active or not. */
export async function systemBotIds(tx: Tx, realmId: number): Promise<number[]> {
  const rows = await tx.prisma.user.findMany({
    where: { realm_id: realmId, is_system_bot: true },
    select: { id: true },
  });
  return rows.map((r) => r.id);
}

/** The owner of bot `userId`, or null (not a bot, or no owner). */
export async function botOwnerId(tx: Tx, userId: number): Promise<number | null> {
  const bot = await tx.prisma.user.findUnique({
    where: { id: userId },
    select: { bot_owner_id: true },
  });
  return bot?.bot_owner_id ?? null;
}

/** Whether the realm has an account whose public address is `email` (any case). */
export async function publicAddressTaken(tx: Tx, realmId: number, email: string): Promise<boolean> {
  const row = await tx.prisma.user.findFirst({
    where: { realm_id: realmId, email: caselessEquals(email) },
    select: { id: true },
  });
  return row !== null;
}

/** Whether the realm has a bot named `fullName` (any case). */
export async function botNameTaken(tx: Tx, realmId: number, fullName: string): Promise<boolean> {
  const row = await tx.prisma.user.findFirst({
    where: { realm_id: realmId, is_bot: true, full_name: caselessEquals(fullName) },
    select: { id: true },
  });
  return row !== null;
}

/** The realm's bot `botId` (not a system bot), or null. */
export function realmBot(tx: Tx, realmId: number, botId: number) {
  return tx.prisma.user.findFirst({
    where: { id: botId, realm_id: realmId, is_bot: true, is_system_bot: false },
  });
}

/** Whether `botId` is a bot of `ownerId` in the realm. */
export async function isBotOf(
  tx: Tx,
  realmId: number,
  botId: number,
  ownerId: number,
): Promise<boolean> {
  const row = await tx.prisma.user.findFirst({
    where: { id: botId, realm_id: realmId, is_bot: true, bot_owner_id: ownerId },
    select: { id: true },
  });
  return row !== null;
}

/** The realm's bots a user may administer (all with `all`, else `ownerId`'s), by id, with owners' addresses. */
export function botsOf(tx: Tx, realmId: number, ownerId: number, all: boolean) {
  return tx.prisma.user.findMany({
    where: {
      realm_id: realmId,
      is_bot: true,
      is_system_bot: false,
      ...(all ? {} : { bot_owner_id: ownerId }),
    },
    include: { bot_owner: { select: { email: true } } },
    orderBy: { id: "asc" },
  });
}

/** How many bots `ownerId` owns, deactivated ones included. */
export function botCount(tx: Tx, ownerId: number): Promise<number> {
  return tx.prisma.user.count({ where: { bot_owner_id: ownerId, is_bot: true } });
}
