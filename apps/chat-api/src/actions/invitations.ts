import type { Tx } from "../db/kysely";
import type { Database } from "../db/database";
import {
  ErrorCode,
  InsufficientPermissionError,
  JsonableError,
  OrganizationAdministratorRequiredError,
  OrganizationOwnerRequiredError,
} from "@repo/envelope";
import type { Logger } from "pino";
import { z } from "zod";
import type { Invitation, ReusableInvitation } from "../gen/prisma/client";
import { sendEvent } from "../realtime/queue";
import type { AuthedUser } from "../caches/auth";
import { Role, isAdministrator, isOwner } from "../lib/roles";
import { accessChannelById } from "./channels";
import { hasRealmPermission } from "./user-groups";
import { lockRealm, realmById } from "../db/queries/realms";
import {
  accountsByDeliveryEmail,
  insertInvitation,
  invitationsSince,
  pendingInvitation,
  renewInvitation,
  pendingInvitations,
  revokeInvitation,
} from "../db/queries/invitations";
import { queueEmail } from "../db/queries/outbox";
import { isNamedUserGroup } from "../db/queries/user-groups";
import { activeAdministratorIds, userById } from "../db/queries/users";
import { randomKey } from "../lib/random-key";

/** How long an invitation lasts when the request does not say (Zulip's default, 10 days). */
export const DEFAULT_INVITE_MINUTES = 14_400;

/** Roles an invitation may carry. */
const INVITE_ROLES: readonly number[] = [
  Role.OWNER,
  Role.ADMINISTRATOR,
  Role.MODERATOR,
  Role.MEMBER,
  Role.GUEST,
];

/** What an invitation grants, shared by email invitations and reusable links. */
export interface InviteTerms {
  /** Minutes until it expires; null = never. */
  expiresInMinutes: number | null;
  inviteAs: number;
  channelIds: readonly number[];
  groupIds: readonly number[];
}

/** A fresh confirmation key (24 lowercase alphanumerics, as Zulip's). */
export function confirmationKey(): string {
  return randomKey("abcdefghijklmnopqrstuvwxyz0123456789", 24);
}

/** Where a key's invitation is accepted. */
export function inviteLink(realmUrl: string, key: string): string {
  return `${realmUrl}/join/${key}/`;
}

/**
 * Checks the terms with Zulip's rules: a known role, one the caller may give
 * (owners invite owners, administrators invite administrators and
 * moderators), a positive lifetime, channels the caller can see and named
 * groups of the realm.
 */
export async function checkTerms(db: Database, user: AuthedUser, terms: InviteTerms) {
  if (!INVITE_ROLES.includes(terms.inviteAs)) throw new JsonableError("Invalid invite_as");
  if (terms.inviteAs === Role.OWNER && !isOwner(user.role))
    throw new OrganizationOwnerRequiredError();
  if (terms.inviteAs <= Role.MODERATOR && !isAdministrator(user.role))
    throw new OrganizationAdministratorRequiredError();
  if (terms.expiresInMinutes !== null && terms.expiresInMinutes <= 0)
    throw new JsonableError("Invalid invite_expires_in_minutes");
  for (const channelId of terms.channelIds) {
    await accessChannelById(db, user, channelId).catch(() => {
      throw new JsonableError(`Invalid channel ID ${channelId}. No invites were sent.`);
    });
  }
  for (const groupId of terms.groupIds) {
    if (!(await isNamedUserGroup(db, user.realm_id, groupId)))
      throw new JsonableError(`Invalid user group ID: ${groupId}`);
  }
}

/** When an invitation made at `created` expires: exactly its minutes later, or never. */
export function expiry(terms: InviteTerms, created: Date): Date | null {
  return terms.expiresInMinutes === null
    ? null
    : new Date(created.getTime() + terms.expiresInMinutes * 60_000);
}

/** `invites_changed` to the realm's administrators and the invitation's creator, inside `tx`. */
export async function sendInvitesChanged(tx: Tx, realmId: number, referrer: number) {
  const admins = await activeAdministratorIds(tx, realmId);
  await sendEvent(tx, [...new Set([referrer, ...admins])], {
    type: "invites_changed",
  });
}

const email = z.email();

/** The failure Zulip answers for a batch of invitations. */
function invitationFailed(
  msg: string,
  errors: [string, string, boolean][],
  sent: boolean,
  dailyLimitReached = false,
): JsonableError {
  return new JsonableError(msg, ErrorCode.INVITATION_FAILED, 400, {
    errors,
    sent_invitations: sent,
    license_limit_reached: false,
    daily_limit_reached: dailyLimitReached,
  });
}

/** Zulip's answer when an invitation would pass the realm's daily limit: nothing is sent. */
function dailyLimitReached(): JsonableError {
  return invitationFailed(
    "To protect users, Zulip limits the number of invitations you can send in one day. Because you have reached the limit, no invitations were sent.",
    [],
    false,
    true,
  );
}

/**
 * POST /invites: one invitation per address, each with its e-mail in the
 * outbox (and a log line), in one transaction with `invites_changed`. The
 * caller needs the realm's `can_invite_users_group`. Any invalid address
 * stops the whole batch; addresses of existing users are skipped and
 * reported after the others are invited.
 */
export async function doInviteUsers(
  db: Database,
  logger: Logger,
  user: AuthedUser,
  request: {
    emails: string;
    terms: InviteTerms;
    notifyReferrerOnJoin: boolean;
    realmUrl: string;
    /** Invitations the realm may send in 24 hours (Zulip's `max_invites`). */
    maxPerDay: number;
  },
): Promise<void> {
  if (!(await hasRealmPermission(db, user.realm_id, "can_invite_users_group_id", user.id)))
    throw new InsufficientPermissionError();
  const realm = await realmById(db, user.realm_id);
  const addresses = [
    ...new Set(
      request.emails
        .split(/[,\n]/)
        .map((e) => e.trim())
        .filter((e) => e !== ""),
    ),
  ];
  if (addresses.length === 0)
    throw new JsonableError("You must specify at least one email address.");
  // More addresses than a whole day allows: refused before any is looked at.
  if (addresses.length > request.maxPerDay) throw dailyLimitReached();
  await checkTerms(db, user, request.terms);
  const invalid = addresses.filter((a) => !email.safeParse(a).success);
  if (invalid.length > 0) {
    throw invitationFailed(
      "Some emails did not validate, so we didn't send any invitations.",
      invalid.map((a) => [a, "Invalid address.", false]),
      false,
    );
  }
  const existing = await accountsByDeliveryEmail(db, user.realm_id, addresses);
  const skipped = addresses.flatMap((a): [string, string, boolean][] => {
    const found = existing.find((u) => u.delivery_email.toLowerCase() === a.toLowerCase());
    if (found === undefined) return [];
    return [
      found.is_active
        ? [a, "Already has an account.", false]
        : [a, "Account has been deactivated.", true],
    ];
  });
  const toInvite = addresses.filter((a) => !skipped.some(([s]) => s === a));
  if (toInvite.length === 0)
    throw invitationFailed("We weren't able to invite anyone.", skipped, false);
  const keys: string[] = [];
  await db.transaction(async (tx) => {
    // One batch at a time per realm, so that two cannot both pass the count (NO KEY
    // UPDATE: rows that merely reference the realm, such as new messages, do not wait).
    await lockRealm(tx, user.realm_id);
    const sentToday = await invitationsSince(tx, user.realm_id, new Date(Date.now() - 86_400_000));
    if (sentToday + toInvite.length > request.maxPerDay) throw dailyLimitReached();
    // One clock read for the creation time and the expiry (the database's default
    // and this process's clock differed by a second at times).
    const created = new Date();
    for (const address of toInvite) {
      const key = confirmationKey();
      keys.push(key);
      await insertInvitation(tx, {
        realm_id: user.realm_id,
        email: address,
        referred_by_id: user.id,
        invited_as: request.terms.inviteAs,
        notify_referrer_on_join: request.notifyReferrerOnJoin,
        confirmation_key: key,
        date_created: created,
        expires_at: expiry(request.terms, created),
        channelIds: request.terms.channelIds,
        groupIds: request.terms.groupIds,
      });
      await queueInvitationEmail(tx, user, realm.name, address, inviteLink(request.realmUrl, key));
    }
    await sendInvitesChanged(tx, user.realm_id, user.id);
  });
  for (const address of toInvite) logger.info({ to: address }, "invitation e-mail queued");
  if (skipped.length > 0) {
    throw invitationFailed(
      "Some of those addresses are already using Zulip, so we didn't send them an invitation. We did send invitations to everyone else!",
      skipped,
      true,
    );
  }
}

/** Queues the e-mail of an invitation from `referrer` to `address`, with its link, inside `tx`. */
async function queueInvitationEmail(
  tx: Tx,
  referrer: { realm_id: number; full_name: string; email: string },
  realmName: string,
  address: string,
  link: string,
): Promise<void> {
  await queueEmail(tx, {
    realm_id: referrer.realm_id,
    to_address: address,
    subject: `${referrer.full_name} has invited you to join ${realmName}`,
    body_text: `${referrer.full_name} (${referrer.email}) has invited you to join ${realmName}.\n\nAccept the invitation: ${link}\n`,
  });
}

/**
 * POST /invites/{id}/resend: sends a pending, unexpired e-mail invitation
 * again with a new link (the old one stops working; the expiry stays), by
 * those who may revoke it; it counts toward the realm's invitations of the
 * day. `invites_changed`.
 */
export async function doResendInvitation(
  db: Database,
  logger: Logger,
  user: AuthedUser,
  id: number,
  request: { realmUrl: string; maxPerDay: number },
): Promise<void> {
  const address = await db.transaction(async (tx) => {
    await lockRealm(tx, user.realm_id);
    const invite = await pendingInvitation(tx, user.realm_id, id);
    const now = new Date();
    if (invite === null || (invite.expires_at !== null && invite.expires_at <= now))
      throw new JsonableError("No such invitation");
    checkRevoke(user, invite);
    const sentToday = await invitationsSince(
      tx,
      user.realm_id,
      new Date(now.getTime() - 86_400_000),
    );
    if (sentToday + 1 > request.maxPerDay) throw dailyLimitReached();
    const key = confirmationKey();
    await renewInvitation(tx, id, key, now);
    const referrer = await userById(tx, invite.referred_by_id);
    const realm = await realmById(tx, user.realm_id);
    await queueInvitationEmail(
      tx,
      referrer,
      realm.name,
      invite.email,
      inviteLink(request.realmUrl, key),
    );
    await sendInvitesChanged(tx, user.realm_id, invite.referred_by_id);
    return invite.email;
  });
  logger.info({ to: address }, "invitation e-mail queued again");
}

const seconds = (date: Date): number => Math.floor(date.getTime() / 1000);

/** GET /invites: unexpired pending invitations; administrators see all, others their own. */
export async function listInvitations(db: Database, user: AuthedUser, realmUrl: string) {
  const [emails, links] = await pendingInvitations(
    db,
    user.realm_id,
    isAdministrator(user.role) ? null : user.id,
  );
  const common = (invite: Invitation | ReusableInvitation) => ({
    id: invite.id,
    invited_by_user_id: invite.referred_by_id,
    invited: seconds(invite.date_created),
    expiry_date: invite.expires_at === null ? null : seconds(invite.expires_at),
    invited_as: invite.invited_as,
    notify_referrer_on_join: invite.notify_referrer_on_join,
  });
  return [
    ...emails.map((invite) => ({ ...common(invite), email: invite.email, is_multiuse: false })),
    ...links.map((invite) => ({
      ...common(invite),
      link_url: inviteLink(realmUrl, invite.confirmation_key),
      is_multiuse: true,
    })),
  ];
}

/**
 * Who may revoke an invitation, as the contract says: its creator or an
 * administrator (else `Must be an organization administrator`, code
 * BAD_REQUEST), and only an owner one that invites an owner.
 */
export function checkRevoke(
  user: AuthedUser,
  invite: { referred_by_id: number; invited_as: number },
) {
  if (invite.invited_as === Role.OWNER && !isOwner(user.role))
    throw new OrganizationOwnerRequiredError();
  if (invite.referred_by_id !== user.id && !isAdministrator(user.role))
    throw new JsonableError("Must be an organization administrator");
}

/** DELETE /invites/{id}: revokes an email invitation; `invites_changed`. */
export async function doRevokeInvitation(
  db: Database,
  user: AuthedUser,
  id: number,
): Promise<void> {
  await db.transaction(async (tx) => {
    const invite = await pendingInvitation(tx, user.realm_id, id);
    if (invite === null) throw new JsonableError("No such invitation");
    checkRevoke(user, invite);
    await revokeInvitation(tx, id);
    await sendInvitesChanged(tx, user.realm_id, invite.referred_by_id);
  });
}
