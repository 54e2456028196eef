/**
 * How people get an account without an operator: accepting an e-mail
 * invitation, or confirming an address (through a reusable invitation link,
 * or the realm's open sign-up). The server's pages (`src/pages/`) call these;
 * each write is one transaction. The links' keys, lifetimes and caps are
 * `confirmation-links.ts`'s; setting a password by a link is
 * `password-reset.ts`'s. A request for a link gets the same answer whether or
 * not the address has an account: what differs is the e-mail, which only the
 * address's owner reads.
 */
import { JsonableError } from "@repo/envelope";
import type { Tx } from "../db/kysely";
import type { Database } from "../db/database";
import type { Channel, Realm } from "../gen/prisma/client";
import { Role } from "../lib/roles";
import { inSignupDomains, isDisposableDomain } from "../lib/email-domains";
import { realmDomains } from "../db/queries/realms";
import {
  ConfirmationKind,
  liveConfirmation,
  useConfirmations,
} from "../db/queries/account-confirmations";
import {
  acceptInvitations,
  liveInvitationByKey,
  liveReusableInvitation,
} from "../db/queries/invitations";
import { queueEmail } from "../db/queries/outbox";
import { defaultChannels, liveChannels } from "../db/queries/channels";
import { activateSubscriptions } from "../db/queries/subscriptions";
import { insertGroupMembers } from "../db/queries/user-groups";
import {
  accountByDeliveryEmail,
  accountById,
  activeUserIds,
  addressTaken,
  setPasswordHash,
} from "../db/queries/users";
import { sendEvent } from "../realtime/queue";
import { checkFullName, createAccount } from "./accounts";
import { sendBotMessage } from "./message-send";
import { notificationBot } from "../db/queries/bots";
import { sendInvitesChanged } from "./invitations";
import {
  LINK_EXPIRED,
  LINK_LIFETIME_MS,
  checkLinkCap,
  checkedPasswordHash,
  isKey,
  keyHash,
  storeLink,
} from "./confirmation-links";
import { announceSubscriptions } from "./subscription-events";

/** What a `/join/<key>/` link is: an e-mail invitation, a reusable one, or nothing live. */
export type JoinLink =
  { kind: "invitation"; email: string } | { kind: "reusable"; id: number } | { kind: "invalid" };

/** What `/join/<key>/` leads to in `realm`. */
export async function joinLink(db: Database, realm: Realm, key: string): Promise<JoinLink> {
  if (!isKey(key)) return { kind: "invalid" };
  const invitation = await liveInvitationByKey(db, realm.id, key);
  if (invitation !== null) return { kind: "invitation", email: invitation.email };
  const reusable = await liveReusableInvitation(db, realm.id, { key });
  return reusable === null ? { kind: "invalid" } : { kind: "reusable", id: reusable.id };
}

/** The address a live sign-up confirmation link was sent to, or null. */
export async function signupLinkAddress(
  db: Database,
  realm: Realm,
  key: string,
): Promise<string | null> {
  if (!isKey(key)) return null;
  const row = await liveConfirmation(db, realm.id, ConfirmationKind.SIGNUP, keyHash(key), false);
  return row?.email ?? null;
}

/** The full name and password a registration form sends. */
export interface Registration {
  fullName: string;
  password: string;
}

/** The account a registration made. */
export interface Registered {
  userId: number;
  email: string;
}

/** What an account made by a link is given: its role, channels and groups. */
interface Grants {
  role: number;
  /** The channels to subscribe it to; undefined = the realm's default channels. */
  channelIds: readonly number[] | undefined;
  groupIds: readonly number[];
}

/**
 * Makes the account of `email` with its password and grants, inside `tx`:
 * the `realm_user` `add`, its subscriptions and group memberships announced,
 * pending invitations to the address marked accepted.
 */
async function makeAccount(
  tx: Tx,
  realm: Realm,
  email: string,
  fullName: string,
  hash: string,
  grants: Grants,
): Promise<number> {
  if (await addressTaken(tx, realm.id, email))
    throw new JsonableError("An account with this email address already exists. Log in instead.");
  const { id } = await createAccount(tx, { realmId: realm.id, email, fullName, role: grants.role });
  await setPasswordHash(tx, id, hash);
  const wanted = grants.channelIds === undefined ? undefined : new Set(grants.channelIds);
  const channels: Channel[] =
    wanted === undefined
      ? await defaultChannels(tx, realm.id)
      : (await liveChannels(tx, realm.id)).filter((channel) => wanted.has(channel.id));
  for (const channel of channels) await activateSubscriptions(tx, channel.id, [id]);
  await announceSubscriptions(
    tx,
    channels.map((channel) => ({ channel, userIds: [id] })),
  );
  if (grants.groupIds.length > 0) {
    const audience = await activeUserIds(tx, realm.id);
    for (const groupId of new Set(grants.groupIds)) {
      await insertGroupMembers(tx, groupId, [id]);
      await sendEvent(tx, audience, {
        type: "user_group",
        op: "add_members",
        group_id: groupId,
        user_ids: [id],
      });
    }
  }
  await acceptInvitations(tx, realm.id, email);
  return id;
}

/**
 * `/join/<key>/` for an e-mail invitation: the invited address gets its
 * account, with the invitation's role, channels and groups; the invitation
 * is used up. `invites_changed` to those who see it.
 */
export async function acceptInvitation(
  db: Database,
  realm: Realm,
  key: string,
  form: Registration,
): Promise<Registered> {
  const fullName = checkFullName(form.fullName);
  const preview = isKey(key) ? await liveInvitationByKey(db, realm.id, key) : null;
  if (preview === null) throw new JsonableError(LINK_EXPIRED);
  const hash = await checkedPasswordHash(form.password, [fullName, preview.email, realm.name]);
  return db.transaction(async (tx) => {
    const invitation = await liveInvitationByKey(tx, realm.id, key, true);
    if (invitation === null) throw new JsonableError(LINK_EXPIRED);
    const userId = await makeAccount(tx, realm, invitation.email, fullName, hash, {
      role: invitation.invited_as,
      channelIds: invitation.channels.map((c) => c.channel_id),
      groupIds: invitation.groups.map((g) => g.group_id),
    });
    if (invitation.notify_referrer_on_join)
      await tellReferrer(tx, realm, invitation.referred_by_id, { id: userId, fullName });
    await sendInvitesChanged(tx, realm.id, invitation.referred_by_id);
    return { userId, email: invitation.email };
  });
}

/**
 * Zulip's direct message from the notification bot to whoever invited a new
 * person (when still active, and the invitation asked for it).
 */
async function tellReferrer(
  tx: Tx,
  realm: Realm,
  referrerId: number,
  joined: { id: number; fullName: string },
): Promise<void> {
  const bot = await notificationBot(tx, realm.id);
  const referrer = await accountById(tx, referrerId);
  if (bot === null || referrer === undefined || !referrer.is_active) return;
  await sendBotMessage(
    tx,
    bot,
    { kind: "direct", userIds: [referrerId] },
    `@_**${joined.fullName}|${String(joined.id)}** accepted your invitation to join Zulip!`,
  );
}

/**
 * Whether `email` may sign up in `realm` by itself (not through an e-mail
 * invitation), with Zulip's answers: the realm's open sign-up (unless through
 * a reusable invitation link), its domains, throwaway providers.
 */
async function checkSignupAddress(
  db: Database,
  realm: Realm,
  email: string,
  throughLink: boolean,
): Promise<void> {
  if (!throughLink && realm.invite_required)
    throw new JsonableError(
      `Please request an invite for ${email} from the organization administrator.`,
    );
  const domain = email.slice(email.lastIndexOf("@") + 1).toLowerCase();
  if (
    realm.emails_restricted_to_domains &&
    !inSignupDomains(domain, await realmDomains(db, realm.id))
  )
    throw new JsonableError(
      `Your email address, ${email}, is not in one of the domains that are allowed to register for accounts in this organization.`,
    );
  if (realm.disallow_disposable_email_addresses && isDisposableDomain(domain))
    throw new JsonableError("Please use your real email address.");
}

/**
 * Sends `email` a link to confirm its address and go on to sign up in
 * `realm` (through reusable invitation `invitationId`, or the realm's open
 * sign-up). An address that has an account is sent a reminder to log in
 * instead; either way the caller answers the same. Refused past
 * {@link LINKS_PER_ADDRESS_PER_HOUR} links to the address in an hour.
 */
export async function requestSignup(
  db: Database,
  realm: Realm,
  email: string,
  invitationId: number | undefined,
  realmUrl: string,
): Promise<void> {
  await checkSignupAddress(db, realm, email, invitationId !== undefined);
  await db.transaction(async (tx) => {
    if (invitationId !== undefined) {
      const live = await liveReusableInvitation(tx, realm.id, { id: invitationId });
      if (live === null) throw new JsonableError(LINK_EXPIRED);
    }
    await checkLinkCap(tx, realm, ConfirmationKind.SIGNUP, email);
    const account = await accountByDeliveryEmail(tx, realm.id, email);
    if (account !== undefined) {
      await queueEmail(tx, {
        realm_id: realm.id,
        to_address: email,
        subject: `Log in to ${realm.name}`,
        body_text: `Someone (possibly you) asked to sign up to ${realm.name} with this address, which already has an account there.\n\nLog in at ${realmUrl}, from a browser or any of Zulip's apps. If you forgot your password, you can reset it: ${realmUrl}/accounts/password/reset/\n`,
      });
      // The same row as a real link (never usable): the per-hour cap counts both.
      await storeLink(tx, realm, ConfirmationKind.SIGNUP, email, {}, LINK_LIFETIME_MS);
      return;
    }
    const key = await storeLink(
      tx,
      realm,
      ConfirmationKind.SIGNUP,
      email,
      {
        ...(invitationId === undefined ? {} : { reusable_invitation_id: invitationId }),
      },
      LINK_LIFETIME_MS,
    );
    await queueEmail(tx, {
      realm_id: realm.id,
      to_address: email,
      subject: "Activate your Zulip account",
      body_text: `You asked to join ${realm.name} (${realmUrl}) with this address.\n\nConfirm it and choose your name and password: ${realmUrl}/accounts/do_confirm/${key}/\n\nThe link works once, for a day. If you did not ask, ignore this e-mail.\n`,
    });
  });
}

/**
 * `/accounts/do_confirm/<key>/`: the confirmed address gets its account, as
 * a member subscribed to the realm's default channels, or with what the
 * reusable invitation it came through grants. The link is used up.
 */
export async function registerConfirmed(
  db: Database,
  realm: Realm,
  key: string,
  form: Registration,
): Promise<Registered> {
  const fullName = checkFullName(form.fullName);
  const email = await signupLinkAddress(db, realm, key);
  if (email === null) throw new JsonableError(LINK_EXPIRED);
  const hash = await checkedPasswordHash(form.password, [fullName, email, realm.name]);
  return db.transaction(async (tx) => {
    const link = await liveConfirmation(tx, realm.id, ConfirmationKind.SIGNUP, keyHash(key), true);
    if (link === null) throw new JsonableError(LINK_EXPIRED);
    let grants: Grants = { role: Role.MEMBER, channelIds: undefined, groupIds: [] };
    let referrer: number | undefined;
    if (link.reusable_invitation_id !== null) {
      const invitation = await liveReusableInvitation(tx, realm.id, {
        id: link.reusable_invitation_id,
      });
      if (invitation === null) throw new JsonableError(LINK_EXPIRED);
      grants = {
        role: invitation.invited_as,
        channelIds: invitation.channels.map((c) => c.channel_id),
        groupIds: invitation.groups.map((g) => g.group_id),
      };
      if (invitation.notify_referrer_on_join) referrer = invitation.referred_by_id;
    }
    const userId = await makeAccount(tx, realm, link.email, fullName, hash, grants);
    if (referrer !== undefined) await tellReferrer(tx, realm, referrer, { id: userId, fullName });
    await useConfirmations(tx, link);
    return { userId, email: link.email };
  });
}
