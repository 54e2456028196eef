import type { Tx } from "../kysely";
import { caselessEquals } from "./text";

/** What a link confirms: an address before sign-up, or the right to set a password. */
export const ConfirmationKind = { SIGNUP: 1, PASSWORD: 2 } as const;
export type ConfirmationKind = (typeof ConfirmationKind)[keyof typeof ConfirmationKind];

/** A link to store (its key only as its SHA-256). */
export interface NewConfirmation {
  realm_id: number;
  kind: ConfirmationKind;
  email: string;
  user_id?: number;
  reusable_invitation_id?: number;
  key_hash: string;
  expires_at: Date;
}

/** Stores a link. */
export async function insertConfirmation(tx: Tx, row: NewConfirmation): Promise<void> {
  await tx.prisma.accountConfirmation.create({ data: row });
}

/**
 * The unused, unexpired link of `kind` whose key hashes to `keyHash`, in
 * realm `realmId`, or null; locked until the transaction ends when asked
 * (two submissions of one link: the second waits, then finds it used).
 */
export async function liveConfirmation(
  tx: Tx,
  realmId: number,
  kind: ConfirmationKind,
  keyHash: string,
  lock: boolean,
) {
  if (lock)
    await tx.q
      .selectFrom("account_confirmations")
      .select("id")
      .where("key_hash", "=", keyHash)
      .forUpdate()
      .execute();
  return tx.prisma.accountConfirmation.findFirst({
    where: {
      realm_id: realmId,
      kind,
      key_hash: keyHash,
      used_at: null,
      expires_at: { gt: new Date() },
    },
  });
}

/** Marks link `id` used, with every other live link of the same kind for the same address. */
export async function useConfirmations(
  tx: Tx,
  row: { id: number; realm_id: number; kind: number; email: string },
): Promise<void> {
  await tx.prisma.accountConfirmation.updateMany({
    where: {
      realm_id: row.realm_id,
      kind: row.kind,
      OR: [{ id: row.id }, { email: caselessEquals(row.email) }],
      used_at: null,
    },
    data: { used_at: new Date() },
  });
}

/** How many links of `kind` were made for `email` (any case) in the realm since `since`. */
export function confirmationsSince(
  tx: Tx,
  realmId: number,
  kind: ConfirmationKind,
  email: string,
  since: Date,
): Promise<number> {
  return tx.prisma.accountConfirmation.count({
    where: { realm_id: realmId, kind, email: caselessEquals(email), date_created: { gte: since } },
  });
}
