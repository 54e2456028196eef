import type { Database } from "../db/database";
import { JsonableError, OrganizationAdministratorRequiredError } from "@repo/envelope";
import type { AuthedUser } from "../caches/auth";
import { isAdministrator } from "../lib/roles";
import {
  insertReusableInvitation,
  pendingReusableInvitation,
  revokeReusableInvitation,
  updateReusableInvitation,
} from "../db/queries/invitations";
import {
  type InviteTerms,
  checkRevoke,
  checkTerms,
  confirmationKey,
  expiry,
  inviteLink,
  sendInvitesChanged,
} from "./invitations";

/*
 * Reusable invitation links (POST, PATCH and DELETE /invites/multiuse): made,
 * changed and revoked with the checks and the event of e-mail invitations.
 */

/** POST /invites/multiuse (administrators): a reusable link; returns its URL. */
export async function doCreateReusableInvite(
  db: Database,
  user: AuthedUser,
  terms: InviteTerms,
  realmUrl: string,
): Promise<string> {
  if (!isAdministrator(user.role)) throw new OrganizationAdministratorRequiredError();
  await checkTerms(db, user, terms);
  const key = confirmationKey();
  const created = new Date();
  await db.transaction(async (tx) => {
    await insertReusableInvitation(tx, {
      realm_id: user.realm_id,
      referred_by_id: user.id,
      invited_as: terms.inviteAs,
      confirmation_key: key,
      date_created: created,
      expires_at: expiry(terms, created),
      channelIds: terms.channelIds,
      groupIds: terms.groupIds,
    });
    await sendInvitesChanged(tx, user.realm_id, user.id);
  });
  return inviteLink(realmUrl, key);
}

/**
 * PATCH /invites/multiuse/{id} (administrators; an owner for a link that
 * makes owners, before or after): changes the role, channels and groups a
 * pending reusable link grants, checked as when it was made; its key and
 * expiry stay. `invites_changed`.
 */
export async function doEditReusableInvite(
  db: Database,
  user: AuthedUser,
  id: number,
  change: { inviteAs?: number; channelIds?: number[]; groupIds?: number[] },
): Promise<void> {
  if (!isAdministrator(user.role)) throw new OrganizationAdministratorRequiredError();
  const invite = await pendingReusableInvitation(db, user.realm_id, id);
  if (invite === null) throw new JsonableError("Invalid invitation ID.");
  checkRevoke(user, invite);
  await checkTerms(db, user, {
    inviteAs: change.inviteAs ?? invite.invited_as,
    expiresInMinutes: null,
    channelIds: change.channelIds ?? [],
    groupIds: change.groupIds ?? [],
  });
  await db.transaction(async (tx) => {
    if ((await pendingReusableInvitation(tx, user.realm_id, id)) === null)
      throw new JsonableError("Invalid invitation ID.");
    await updateReusableInvitation(tx, id, {
      ...(change.inviteAs === undefined ? {} : { invited_as: change.inviteAs }),
      ...(change.channelIds === undefined ? {} : { channelIds: change.channelIds }),
      ...(change.groupIds === undefined ? {} : { groupIds: change.groupIds }),
    });
    await sendInvitesChanged(tx, user.realm_id, invite.referred_by_id);
  });
}

/** DELETE /invites/multiuse/{id}: revokes a reusable link; `invites_changed`. */
export async function doRevokeReusableInvite(
  db: Database,
  user: AuthedUser,
  id: number,
): Promise<void> {
  await db.transaction(async (tx) => {
    const invite = await pendingReusableInvitation(tx, user.realm_id, id);
    if (invite === null) throw new JsonableError("Invalid invitation ID.");
    checkRevoke(user, invite);
    await revokeReusableInvitation(tx, id);
    await sendInvitesChanged(tx, user.realm_id, invite.referred_by_id);
  });
}
