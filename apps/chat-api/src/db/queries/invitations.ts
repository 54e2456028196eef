import type { Tx } from "../kysely";
import { caselessEquals } from "./text";

/** An invitation's status: pending (accepted and revoked ones keep their rows with another). */
export const PENDING = 0;
const ACCEPTED = 1;
const REVOKED = 2;

/** What an invitation, by e-mail or reusable link, grants. */
export interface InvitationRow {
  realm_id: number;
  referred_by_id: number;
  invited_as: number;
  confirmation_key: string;
  date_created: Date;
  expires_at: Date | null;
  channelIds: readonly number[];
  groupIds: readonly number[];
}

/** The grants of an invitation as Prisma's nested rows. */
function grants<R extends InvitationRow>(row: R) {
  const { channelIds, groupIds, ...own } = row;
  return {
    ...own,
    channels: { create: channelIds.map((channel_id) => ({ channel_id })) },
    groups: { create: groupIds.map((group_id) => ({ group_id })) },
  };
}

/** Stores an e-mail invitation with its channels and groups. */
export async function insertInvitation(
  tx: Tx,
  row: InvitationRow & { email: string; notify_referrer_on_join: boolean },
): Promise<void> {
  await tx.prisma.invitation.create({ data: grants(row) });
}

/** Stores a reusable invitation link with its channels and groups. */
export async function insertReusableInvitation(tx: Tx, row: InvitationRow): Promise<void> {
  await tx.prisma.reusableInvitation.create({ data: grants(row) });
}

/**
 * Changes what reusable invitation `id` grants: its role, and (when given)
 * the whole set of its channels or of its groups, each replaced set-based.
 */
export async function updateReusableInvitation(
  tx: Tx,
  id: number,
  change: { invited_as?: number; channelIds?: readonly number[]; groupIds?: readonly number[] },
): Promise<void> {
  const { channelIds, groupIds, ...own } = change;
  await tx.prisma.reusableInvitation.update({
    where: { id },
    data: {
      ...own,
      ...(channelIds === undefined
        ? {}
        : {
            channels: {
              deleteMany: {},
              create: [...new Set(channelIds)].map((channel_id) => ({ channel_id })),
            },
          }),
      ...(groupIds === undefined
        ? {}
        : {
            groups: {
              deleteMany: {},
              create: [...new Set(groupIds)].map((group_id) => ({ group_id })),
            },
          }),
    },
  });
}

/** How many invitations the realm made since `since`. */
export function invitationsSince(tx: Tx, realmId: number, since: Date): Promise<number> {
  return tx.prisma.invitation.count({ where: { realm_id: realmId, date_created: { gte: since } } });
}

/** Accounts of the realm whose delivery address is one of `addresses` (any case). */
export function accountsByDeliveryEmail(tx: Tx, realmId: number, addresses: readonly string[]) {
  return tx.prisma.user.findMany({
    where: { realm_id: realmId, OR: addresses.map((a) => ({ delivery_email: caselessEquals(a) })) },
    select: { delivery_email: true, is_active: true },
  });
}

/** Unexpired pending invitations of the realm, by e-mail and by link; only `referrer`'s if given. */
export function pendingInvitations(tx: Tx, realmId: number, referrer: number | null) {
  const where = {
    realm_id: realmId,
    status: PENDING,
    OR: [{ expires_at: null }, { expires_at: { gt: new Date() } }],
    ...(referrer === null ? {} : { referred_by_id: referrer }),
  };
  return Promise.all([
    tx.prisma.invitation.findMany({ where, orderBy: { id: "asc" } }),
    tx.prisma.reusableInvitation.findMany({ where, orderBy: { id: "asc" } }),
  ]);
}

/** The realm's pending e-mail invitation `id`, or null. */
export function pendingInvitation(tx: Tx, realmId: number, id: number) {
  return tx.prisma.invitation.findFirst({ where: { id, realm_id: realmId, status: PENDING } });
}

/** The realm's pending reusable invitation `id`, or null. */
export function pendingReusableInvitation(tx: Tx, realmId: number, id: number) {
  return tx.prisma.reusableInvitation.findFirst({
    where: { id, realm_id: realmId, status: PENDING },
  });
}

/** Gives e-mail invitation `id` a new key, as sent again at `now` (it counts toward the day's invitations). */
export async function renewInvitation(tx: Tx, id: number, key: string, now: Date): Promise<void> {
  await tx.prisma.invitation.update({
    where: { id },
    data: { confirmation_key: key, date_created: now },
  });
}

/** Revokes e-mail invitation `id`. */
export async function revokeInvitation(tx: Tx, id: number): Promise<void> {
  await tx.prisma.invitation.update({ where: { id }, data: { status: REVOKED } });
}

/** Revokes reusable invitation `id`. */
export async function revokeReusableInvitation(tx: Tx, id: number): Promise<void> {
  await tx.prisma.reusableInvitation.update({ where: { id }, data: { status: REVOKED } });
}

/** Where an invitation's grants are (its channels and groups). */
const withGrants = {
  channels: { select: { channel_id: true } },
  groups: { select: { group_id: true } },
} as const;

/** Only invitations still pending and unexpired. */
function live(realmId: number) {
  return {
    realm_id: realmId,
    status: PENDING,
    OR: [{ expires_at: null }, { expires_at: { gt: new Date() } }],
  };
}

/**
 * The realm's live e-mail invitation whose key is `key`, with its channels
 * and groups, or null; with `lock`, its row stays locked until the
 * transaction ends (a second acceptance waits, then finds it accepted).
 */
export async function liveInvitationByKey(tx: Tx, realmId: number, key: string, lock = false) {
  if (lock)
    await tx.q
      .selectFrom("invitations")
      .select("id")
      .where("confirmation_key", "=", key)
      .forUpdate()
      .execute();
  return tx.prisma.invitation.findFirst({
    where: { ...live(realmId), confirmation_key: key },
    include: withGrants,
  });
}

/** The realm's live reusable invitation whose key is `key` (or id is `id`), with its grants, or null. */
export function liveReusableInvitation(
  tx: Tx,
  realmId: number,
  by: { key: string } | { id: number },
) {
  return tx.prisma.reusableInvitation.findFirst({
    where: { ...live(realmId), ...("key" in by ? { confirmation_key: by.key } : { id: by.id }) },
    include: withGrants,
  });
}

/** Marks every pending e-mail invitation of the realm to `email` (any case) accepted. */
export async function acceptInvitations(tx: Tx, realmId: number, email: string): Promise<void> {
  await tx.prisma.invitation.updateMany({
    where: { realm_id: realmId, status: PENDING, email: caselessEquals(email) },
    data: { status: ACCEPTED },
  });
}
