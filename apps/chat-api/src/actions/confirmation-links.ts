/**
 * What the e-mailed links of sign-up and password reset share: their keys
 * (24 random characters, about 124 bits, stored only as their SHA-256),
 * lifetimes, the per-address cap, and the new password's check.
 */
import { createHash } from "node:crypto";
import { JsonableError } from "@repo/envelope";
import type { Tx } from "../db/kysely";
import type { Realm } from "../gen/prisma/client";
import { codePoints } from "../lib/text";
import { hashPassword } from "../lib/passwords";
import { FORM_PASSWORD_MAX_LENGTH, isStrongPassword } from "../lib/password-strength";
import {
  type ConfirmationKind,
  confirmationsSince,
  insertConfirmation,
} from "../db/queries/account-confirmations";
import { confirmationKey } from "./invitations";

/** How long a sign-up confirmation or password link works (Zulip: a day). */
export const LINK_LIFETIME_MS = 24 * 3_600_000;
/** How long the link to a new organization's owner works. */
export const OWNER_LINK_LIFETIME_MS = 7 * 24 * 3_600_000;
/** Links one address may be sent per hour, of each kind. */
export const LINKS_PER_ADDRESS_PER_HOUR = 3;

/** The form's answer to a password that breaks Zulip's rule. */
export const PASSWORD_TOO_WEAK = "The password is too weak.";

/** The SHA-256 (hex) a confirmation's key is stored as. */
export function keyHash(key: string): string {
  return createHash("sha256").update(key).digest("hex");
}

/** A key's shape: anything else is no key, answered without a lookup. */
export function isKey(key: string): boolean {
  return /^[a-z0-9]{24}$/.test(key);
}

/** The page's answer to a link that is used, expired, revoked or made up (Zulip's words). */
export const LINK_EXPIRED = "Whoops. The confirmation link has expired or been deactivated.";

/**
 * Checks a new password against the form's length and Zulip's strength rule,
 * and hashes it (before any transaction: a hash takes a thread for 50 ms).
 */
export async function checkedPasswordHash(password: string, userInputs: string[]): Promise<string> {
  if (codePoints(password) > FORM_PASSWORD_MAX_LENGTH)
    throw new JsonableError(
      `Ensure this value has at most ${String(FORM_PASSWORD_MAX_LENGTH)} characters.`,
    );
  if (!(await isStrongPassword(password, userInputs))) throw new JsonableError(PASSWORD_TOO_WEAK);
  return hashPassword(password);
}

/** Refuses a link to an address that was sent {@link LINKS_PER_ADDRESS_PER_HOUR} this hour. */
export async function checkLinkCap(
  tx: Tx,
  realm: Realm,
  kind: ConfirmationKind,
  email: string,
): Promise<void> {
  const recent = await confirmationsSince(
    tx,
    realm.id,
    kind,
    email,
    new Date(Date.now() - 3_600_000),
  );
  if (recent >= LINKS_PER_ADDRESS_PER_HOUR)
    throw new JsonableError(
      "You have requested too many e-mails for this address. Try again in an hour.",
    );
}

/** Stores a link of `kind` for `email` and answers its key (only its hash is stored). */
export async function storeLink(
  tx: Tx,
  realm: Realm,
  kind: ConfirmationKind,
  email: string,
  about: { user_id?: number; reusable_invitation_id?: number },
  lifetimeMs: number,
): Promise<string> {
  const key = confirmationKey();
  await insertConfirmation(tx, {
    realm_id: realm.id,
    kind,
    email,
    ...about,
    key_hash: keyHash(key),
    expires_at: new Date(Date.now() + lifetimeMs),
  });
  return key;
}
