import type { Prisma, PushTokenKind } from "../../gen/prisma/client";
import type { Tx } from "../kysely";

/** User `userId`'s device `deviceId` with its push registration, or null. */
export function ownDevice(tx: Tx, userId: number, deviceId: number) {
  return tx.prisma.device.findFirst({
    where: { id: deviceId, user_id: userId },
    include: { push_registration: true },
  });
}

/** User `userId`'s devices by id, each with its push registration. */
export function devicesOf(tx: Tx, userId: number) {
  return tx.prisma.device.findMany({
    where: { user_id: userId },
    include: { push_registration: true },
    orderBy: { id: "asc" },
  });
}

/** How many devices user `userId` registered. */
export function deviceCount(tx: Tx, userId: number): Promise<number> {
  return tx.prisma.device.count({ where: { user_id: userId } });
}

/** Registers a device for user `userId`; answers its id. */
export async function insertDevice(tx: Tx, userId: number): Promise<number> {
  const device = await tx.prisma.device.create({ data: { user_id: userId }, select: { id: true } });
  return device.id;
}

/** Removes user `userId`'s device `deviceId` (and its registration); whether there was one. */
export async function deleteOwnDevice(tx: Tx, userId: number, deviceId: number): Promise<boolean> {
  const { count } = await tx.prisma.device.deleteMany({
    where: { id: deviceId, user_id: userId },
  });
  return count > 0;
}

/** What a push registration's write sets: its key, its token, or both. */
export type RegistrationChange = Omit<Prisma.PushRegistrationUncheckedCreateInput, "device_id">;

/** Creates or updates device `deviceId`'s push registration; answers it as stored. */
export function upsertPushRegistration(tx: Tx, deviceId: number, change: RegistrationChange) {
  return tx.prisma.pushRegistration.upsert({
    where: { device_id: deviceId },
    create: { device_id: deviceId, ...change },
    update: { ...change, last_updated: new Date() },
  });
}

/** Deletes user `userId`'s legacy tokens of token id `tokenId`; answers them as they were. */
export async function takeLegacyTokensById(
  tx: Tx,
  userId: number,
  tokenId: Uint8Array<ArrayBuffer>,
) {
  const matching = await tx.prisma.legacyPushToken.findMany({
    where: { user_id: userId, token_id: tokenId },
  });
  await tx.prisma.legacyPushToken.deleteMany({ where: { id: { in: matching.map((m) => m.id) } } });
  return matching;
}

/** How many legacy push tokens user `userId` holds. */
export function legacyTokenCount(tx: Tx, userId: number): Promise<number> {
  return tx.prisma.legacyPushToken.count({ where: { user_id: userId } });
}

/** A legacy push token as a client registers it. */
export interface LegacyTokenRow {
  kind: PushTokenKind;
  token: string;
  token_id: Uint8Array<ArrayBuffer>;
  ios_app_id: string | null;
}

/** Stores (or refreshes) user `userId`'s legacy push token. */
export async function upsertLegacyToken(
  tx: Tx,
  userId: number,
  row: LegacyTokenRow,
): Promise<void> {
  await tx.prisma.legacyPushToken.upsert({
    where: { user_id_kind_token: { user_id: userId, kind: row.kind, token: row.token } },
    create: { user_id: userId, ...row },
    update: { ios_app_id: row.ios_app_id, last_updated: new Date() },
  });
}

/** Deletes user `userId`'s legacy token; whether there was one. */
export async function deleteLegacyToken(
  tx: Tx,
  userId: number,
  kind: PushTokenKind,
  token: string,
): Promise<boolean> {
  const { count } = await tx.prisma.legacyPushToken.deleteMany({
    where: { user_id: userId, kind, token },
  });
  return count > 0;
}

/** User `userId`'s legacy push tokens (only those equal to `token` when given), by id. */
export function legacyTokensOf(tx: Tx, userId: number, token?: string) {
  return tx.prisma.legacyPushToken.findMany({
    where: { user_id: userId, ...(token === undefined ? {} : { token }) },
    select: { kind: true, token: true },
    orderBy: { id: "asc" },
  });
}
