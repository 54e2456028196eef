/**
 * Setting a password through an e-mailed link: a reset asked for on
 * `/accounts/password/reset/`, or a new organization's owner's first one.
 */
import { JsonableError } from "@repo/envelope";
import type { Tx } from "../db/kysely";
import type { Database } from "../db/database";
import type { Realm } from "../gen/prisma/client";
import {
  ConfirmationKind,
  liveConfirmation,
  useConfirmations,
} from "../db/queries/account-confirmations";
import { queueEmail } from "../db/queries/outbox";
import { accountByDeliveryEmail, setPasswordHash } from "../db/queries/users";
import {
  LINK_EXPIRED,
  LINK_LIFETIME_MS,
  checkLinkCap,
  checkedPasswordHash,
  isKey,
  keyHash,
  storeLink,
} from "./confirmation-links";

/** Whether a live password link has key `key`. */
export async function isLivePasswordLink(db: Database, realm: Realm, key: string) {
  if (!isKey(key)) return false;
  return (
    (await liveConfirmation(db, realm.id, ConfirmationKind.PASSWORD, keyHash(key), false)) !== null
  );
}

/**
 * `/accounts/password/reset/`: sends `email` a link to set a new password
 * when it is an active account's address in `realm`, or else a note that it
 * has none there; the caller answers the same either way.
 */
export async function requestPasswordReset(
  db: Database,
  realm: Realm,
  email: string,
  realmUrl: string,
): Promise<void> {
  await db.transaction(async (tx) => {
    await checkLinkCap(tx, realm, ConfirmationKind.PASSWORD, email);
    const account = await accountByDeliveryEmail(tx, realm.id, email);
    if (account === undefined || !account.is_active || account.is_bot || realm.deactivated) {
      await storeLink(tx, realm, ConfirmationKind.PASSWORD, email, {}, 0);
      await queueEmail(tx, {
        realm_id: realm.id,
        to_address: email,
        subject: `Password reset request for ${realm.name}`,
        body_text: `Someone (possibly you) asked to reset the password of an account with this address in ${realm.name} (${realmUrl}). This address has no active account there, so no password was changed.\n\nIf you did not ask, ignore this e-mail.\n`,
      });
      return;
    }
    await queuePasswordLink(tx, realm, account, realmUrl, LINK_LIFETIME_MS, false);
  });
}

/** Stores a password link for `user` and queues its e-mail (a reset, or a new owner's first password). */
export async function queuePasswordLink(
  tx: Tx,
  realm: Realm,
  user: { id: number; delivery_email: string },
  realmUrl: string,
  lifetimeMs: number,
  newOwner: boolean,
): Promise<string> {
  const key = await storeLink(
    tx,
    realm,
    ConfirmationKind.PASSWORD,
    user.delivery_email,
    { user_id: user.id },
    lifetimeMs,
  );
  const link = `${realmUrl}/accounts/password/reset/${key}/`;
  await queueEmail(
    tx,
    newOwner
      ? {
          realm_id: realm.id,
          to_address: user.delivery_email,
          subject: `Your new organization ${realm.name}`,
          body_text: `The organization ${realm.name} (${realmUrl}) has been created, with you as its owner.\n\nChoose your password: ${link}\n\nThe link works once, for a week. Then log in at ${realmUrl} from a browser or any of Zulip's apps.\n`,
        }
      : {
          realm_id: realm.id,
          to_address: user.delivery_email,
          subject: `Password reset request for ${realm.name}`,
          body_text: `Someone (possibly you) asked to reset the password of your account in ${realm.name} (${realmUrl}).\n\nChoose a new password: ${link}\n\nThe link works once, for a day. If you did not ask, ignore this e-mail: your password stays as it is.\n`,
        },
  );
  return link;
}

/**
 * `/accounts/password/reset/<key>/`: sets the password of the link's account;
 * the link, and every other password link of the address, is used up.
 */
export async function resetPassword(
  db: Database,
  realm: Realm,
  key: string,
  password: string,
): Promise<{ email: string }> {
  if (!(await isLivePasswordLink(db, realm, key))) throw new JsonableError(LINK_EXPIRED);
  const hash = await checkedPasswordHash(password, [realm.name]);
  return db.transaction(async (tx) => {
    const link = await liveConfirmation(
      tx,
      realm.id,
      ConfirmationKind.PASSWORD,
      keyHash(key),
      true,
    );
    if (link?.user_id == null) throw new JsonableError(LINK_EXPIRED);
    await setPasswordHash(tx, link.user_id, hash);
    await useConfirmations(tx, link);
    return { email: link.email };
  });
}
