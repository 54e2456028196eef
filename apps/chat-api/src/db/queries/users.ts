import type { Prisma } from "../../gen/prisma/client";
import type { Tx } from "../kysely";
import { Role } from "../../lib/roles";
import { caselessEquals, sameText } from "./text";

/** The columns of an account that authentication needs, with whether its realm is deactivated. */
function accounts(tx: Tx) {
  return tx.q
    .selectFrom("users as u")
    .innerJoin("realms as r", "r.id", "u.realm_id")
    .select([
      "u.id",
      "u.realm_id",
      "u.email",
      "u.delivery_email",
      "u.full_name",
      "u.role",
      "u.is_bot",
      "u.bot_type",
      "u.bot_owner_id",
      "u.is_active",
      "u.is_system_bot",
      "u.api_key",
      "r.deactivated as realm_deactivated",
    ]);
}

/**
 * The account whose API key is `apiKey`, with what authentication needs of
 * it and whether its realm is deactivated, in one statement.
 */
export function accountByApiKey(tx: Tx, apiKey: string) {
  return accounts(tx).where("u.api_key", "=", apiKey).executeTakeFirst();
}

/** Account `userId` as {@link accountByApiKey} reads it (the server acting for it: a scheduled send). */
export function accountById(tx: Tx, userId: number) {
  return accounts(tx).where("u.id", "=", userId).executeTakeFirst();
}

/** The realm's account whose delivery address is `email` (any case), active or not. */
export function accountByDeliveryEmail(tx: Tx, realmId: number, email: string) {
  return tx.q
    .selectFrom("users")
    .select(["id", "email", "delivery_email", "api_key", "is_active", "is_bot", "password"])
    .where("realm_id", "=", realmId)
    .where((eb) => sameText(eb, "delivery_email", email))
    .executeTakeFirst();
}

/** Whether `email` (any case) is the delivery or the public address of an account of the realm. */
export async function addressTaken(tx: Tx, realmId: number, email: string): Promise<boolean> {
  const row = await tx.q
    .selectFrom("users")
    .select("id")
    .where("realm_id", "=", realmId)
    .where((eb) => eb.or([sameText(eb, "delivery_email", email), sameText(eb, "email", email)]))
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * Locks the user's row against other lockers (NO KEY UPDATE: rows that merely
 * reference the user, such as new messages, do not wait).
 */
export async function lockUser(tx: Tx, userId: number): Promise<void> {
  await tx.q.selectFrom("users").select("id").where("id", "=", userId).forNoKeyUpdate().execute();
}

/** Sets (or, with null, removes) user `userId`'s password hash. */
export async function setPasswordHash(tx: Tx, userId: number, hash: string | null): Promise<void> {
  await tx.q.updateTable("users").set({ password: hash }).where("id", "=", userId).execute();
}

/** Inserts a user or bot row; answers it as stored. */
export function insertUser(tx: Tx, row: Prisma.UserUncheckedCreateInput) {
  return tx.prisma.user.create({ data: row });
}

/** A user with their custom profile values (for a `realm_user` view). */
export function userWithProfile(tx: Tx, userId: number) {
  return tx.prisma.user.findUniqueOrThrow({
    where: { id: userId },
    include: { custom_profile_values: true },
  });
}

/** The realm's active users with their roles. */
export function activeUserRoles(tx: Tx, realmId: number) {
  return tx.prisma.user.findMany({
    where: { realm_id: realmId, is_active: true },
    select: { id: true, role: true },
  });
}

/** Ids of the realm's active administrators and owners. */
export async function activeAdministratorIds(tx: Tx, realmId: number): Promise<number[]> {
  const rows = await tx.prisma.user.findMany({
    where: { realm_id: realmId, is_active: true, role: { lte: Role.ADMINISTRATOR } },
    select: { id: true },
  });
  return rows.map((r) => r.id);
}

/** Sets whether a user may log in; answers the user as stored. */
export function setUserActive(tx: Tx, userId: number, active: boolean) {
  return tx.prisma.user.update({ where: { id: userId }, data: { is_active: active } });
}

/** Deactivates the users `ids` in one statement. */
export async function deactivateUsers(tx: Tx, ids: readonly number[]): Promise<void> {
  await tx.prisma.user.updateMany({ where: { id: { in: [...ids] } }, data: { is_active: false } });
}

/** Gives a user a new API key; answers the user as stored. */
export function setApiKey(tx: Tx, userId: number, apiKey: string) {
  return tx.prisma.user.update({ where: { id: userId }, data: { api_key: apiKey } });
}

/** Whether the server granted the user `can_create_users`. */
export async function canCreateUsers(tx: Tx, userId: number): Promise<boolean> {
  const user = await tx.prisma.user.findUniqueOrThrow({
    where: { id: userId },
    select: { can_create_users: true },
  });
  return user.can_create_users;
}

/** The first of `ids` that is not an active user of the realm, if any. */
export async function firstInactiveOrUnknown(
  tx: Tx,
  realmId: number,
  ids: readonly number[],
): Promise<number | undefined> {
  const found = await tx.prisma.user.findMany({
    where: { id: { in: [...ids] }, realm_id: realmId, is_active: true },
    select: { id: true },
  });
  const active = new Set(found.map((u) => u.id));
  return ids.find((id) => !active.has(id));
}

/** The realm's users among `ids`, active or not. */
export function usersAmong(tx: Tx, realmId: number, ids: readonly number[]) {
  return tx.prisma.user.findMany({
    where: { id: { in: [...ids] }, realm_id: realmId },
    select: { id: true, is_active: true },
  });
}

/** User `userId`'s role as stored now. */
export async function roleOf(tx: Tx, userId: number): Promise<number> {
  const user = await tx.prisma.user.findUniqueOrThrow({
    where: { id: userId },
    select: { role: true },
  });
  return user.role;
}

/** User `userId`'s row (it exists). */
export function userById(tx: Tx, userId: number) {
  return tx.prisma.user.findUniqueOrThrow({ where: { id: userId } });
}

/** The realm's active users named (any case) `names` or with ids `ids`, by id. */
export function mentionablePeople(
  tx: Tx,
  realmId: number,
  names: readonly string[],
  ids: readonly number[],
) {
  return tx.prisma.user.findMany({
    where: {
      realm_id: realmId,
      is_active: true,
      OR: [...names.map((n) => ({ full_name: caselessEquals(n) })), ...ids.map((id) => ({ id }))],
    },
    select: { id: true, full_name: true },
    orderBy: { id: "asc" },
  });
}

/** Users `ids`, by id, with their names. */
export function peopleNamed(tx: Tx, ids: readonly number[]) {
  return tx.prisma.user.findMany({
    where: { id: { in: [...ids] } },
    select: { id: true, full_name: true },
    orderBy: { id: "asc" },
  });
}

/** The realm's users, active or not, by id (with their profile values if asked). */
export function realmUsers(tx: Tx, realmId: number, withProfile: boolean) {
  return tx.prisma.user.findMany({
    where: { realm_id: realmId },
    include: { custom_profile_values: withProfile },
    orderBy: { id: "asc" },
  });
}

/**
 * The realm's user with id `ref`, or whose public address (or, with
 * `byDeliveryEmail`, delivery address) is `ref` in any case; null if none.
 */
export function userByIdOrAddress(
  tx: Tx,
  realmId: number,
  ref: number | string,
  byDeliveryEmail: boolean,
  withProfile: boolean,
) {
  const byAddress = (column: "email" | "delivery_email") => ({
    [column]: caselessEquals(String(ref)),
  });
  return tx.prisma.user.findFirst({
    where: {
      realm_id: realmId,
      ...(typeof ref === "number"
        ? { id: ref }
        : { OR: [byAddress("email"), ...(byDeliveryEmail ? [byAddress("delivery_email")] : [])] }),
    },
    include: { custom_profile_values: withProfile },
    orderBy: { id: "asc" },
  });
}

/** Whether `userId` is a user of the realm, active or not. */
export async function isRealmUser(tx: Tx, realmId: number, userId: number): Promise<boolean> {
  const row = await tx.prisma.user.findFirst({
    where: { id: userId, realm_id: realmId },
    select: { id: true },
  });
  return row !== null;
}

/**
 * Ids of the realm's active users: the audience of a realm-wide event (at
 * most `atMost` of them, for a caller that only sends to audiences that small).
 */
export async function activeUserIds(tx: Tx, realmId: number, atMost?: number): Promise<number[]> {
  const rows = await tx.prisma.user.findMany({
    where: { realm_id: realmId, is_active: true },
    select: { id: true },
    ...(atMost === undefined ? {} : { take: atMost }),
  });
  return rows.map((r) => r.id);
}

/** Grants (or takes back) user `userId`'s server-granted `can_create_users`. */
export async function setCanCreateUsers(tx: Tx, userId: number, granted: boolean): Promise<void> {
  await tx.prisma.user.update({ where: { id: userId }, data: { can_create_users: granted } });
}

/** User `userId`'s API key. */
export async function apiKeyOf(tx: Tx, userId: number): Promise<string> {
  const user = await tx.prisma.user.findUniqueOrThrow({
    where: { id: userId },
    select: { api_key: true },
  });
  return user.api_key;
}

/**
 * The realm's users whose id is one of `ids` or whose public address is one
 * of `emails` (any case): their ids, addresses and whether they are active.
 */
export function usersByIdOrEmail(
  tx: Tx,
  realmId: number,
  ids: readonly number[],
  emails: readonly string[],
) {
  return tx.prisma.user.findMany({
    where: {
      realm_id: realmId,
      OR: [
        ...(ids.length === 0 ? [] : [{ id: { in: [...ids] } }]),
        ...(emails.length === 0
          ? []
          : [{ email: { in: [...emails], mode: "insensitive" as const } }]),
      ],
    },
    select: { id: true, email: true, is_active: true },
  });
}

/** Ids of the realm's active human owners. */
export async function activeOwnerIds(tx: Tx, realmId: number): Promise<number[]> {
  const rows = await tx.prisma.user.findMany({
    where: { realm_id: realmId, is_active: true, is_bot: false, role: Role.OWNER },
    select: { id: true },
  });
  return rows.map((r) => r.id);
}

/** How many active accounts (bots included) the realm has. */
export function activeAccountCount(tx: Tx, realmId: number): Promise<number> {
  return tx.prisma.user.count({ where: { realm_id: realmId, is_active: true } });
}

/** Sets user `userId`'s role. */
export async function setRole(tx: Tx, userId: number, role: number): Promise<void> {
  await tx.q.updateTable("users").set({ role }).where("id", "=", userId).execute();
}

/** The realm's active humans with their stored settings, by id. */
export function activeHumanSettings(tx: Tx, realmId: number) {
  return tx.prisma.user.findMany({
    where: { realm_id: realmId, is_active: true, is_bot: false },
    select: { id: true, settings: true, timezone: true, enable_drafts_synchronization: true },
    orderBy: { id: "asc" },
  });
}
