import { z } from "zod";
import {
  DEFAULT_INVITE_MINUTES,
  type InviteTerms,
  doInviteUsers,
  doRevokeInvitation,
  doResendInvitation,
  listInvitations,
} from "../actions/invitations";
import {
  doCreateReusableInvite,
  doEditReusableInvite,
  doRevokeReusableInvite,
} from "../actions/invitation-links";
import { bool, int, json, str } from "../http/params";
import { realmUrl } from "../lib/realm-url";
import { Role } from "../lib/roles";
import { userEndpoint } from "../http/typed-endpoint";
import type { Services } from "../http/context";

/** The terms both kinds of invitation take. */
const termParams = {
  invite_expires_in_minutes: json(z.int32().nullable())
    .default(DEFAULT_INVITE_MINUTES)
    .describe("Minutes until it expires; null for never"),
  invite_as: int().default(Role.MEMBER),
  stream_ids: json(z.array(z.int32())).default([]),
  group_ids: json(z.array(z.int32())).default([]),
  include_realm_default_subscriptions: bool().default(false),
};

function terms(params: {
  invite_expires_in_minutes: number | null;
  invite_as: number;
  stream_ids: number[];
  group_ids: number[];
}): InviteTerms {
  return {
    expiresInMinutes: params.invite_expires_in_minutes,
    inviteAs: params.invite_as,
    channelIds: params.stream_ids,
    groupIds: params.group_ids,
  };
}

/** Invitations: by e-mail and as reusable links. */
export function inviteRoutes({ db, config, logger }: Services) {
  return {
    sendInvites: userEndpoint(
      {
        operationId: "send-invites",
        summary: "Send invitations",
        tag: "invites",
        access: { guests: false },
        params: {
          invitee_emails: str().describe("Addresses, separated by commas or newlines"),
          notify_referrer_on_join: bool().default(true),
          ...termParams,
        },
      },
      async ({ realm, user, params }) => {
        await doInviteUsers(db, logger, user, {
          emails: params.invitee_emails,
          terms: terms(params),
          notifyReferrerOnJoin: params.notify_referrer_on_join,
          realmUrl: realmUrl(config, realm),
          maxPerDay: config.CHAT_MAX_INVITES_PER_DAY,
        });
        return {};
      },
    ),
    createInviteLink: userEndpoint(
      {
        operationId: "create-invite-link",
        summary: "Create a reusable invitation link",
        tag: "invites",
        params: termParams,
      },
      async ({ realm, user, params }) => ({
        invite_link: await doCreateReusableInvite(db, user, terms(params), realmUrl(config, realm)),
      }),
    ),
    editInviteLink: userEndpoint(
      {
        pathParams: ["invite_id"],
        operationId: "edit-invite-link",
        summary: "Edit a reusable invitation link",
        tag: "invites",
        params: {
          invite_as: int().optional().describe("The role people joining by the link get"),
          stream_ids: json(z.array(z.int32()))
            .optional()
            .describe("The channels they are subscribed to: the whole new set"),
          group_ids: json(z.array(z.int32()))
            .optional()
            .describe("The groups they join: the whole new set"),
        },
      },
      async ({ user, path, params }) => {
        await doEditReusableInvite(db, user, path.invite_id, {
          ...(params.invite_as === undefined ? {} : { inviteAs: params.invite_as }),
          ...(params.stream_ids === undefined ? {} : { channelIds: params.stream_ids }),
          ...(params.group_ids === undefined ? {} : { groupIds: params.group_ids }),
        });
        return {};
      },
    ),
    getInvites: userEndpoint(
      { operationId: "get-invites", summary: "Get all invitations", tag: "invites", params: {} },
      async ({ realm, user }) => ({
        invites: await listInvitations(db, user, realmUrl(config, realm)),
      }),
    ),
    revokeEmailInvite: userEndpoint(
      {
        pathParams: ["invite_id"],
        operationId: "revoke-email-invite",
        summary: "Revoke an email invitation",
        tag: "invites",
        params: {},
      },
      async ({ user, path }) => {
        await doRevokeInvitation(db, user, path.invite_id);
        return {};
      },
    ),
    resendEmailInvite: userEndpoint(
      {
        pathParams: ["invite_id"],
        operationId: "resend-email-invite",
        summary: "Resend an email invitation",
        tag: "invites",
        access: { guests: false },
        params: {},
      },
      async ({ realm, user, path }) => {
        await doResendInvitation(db, logger, user, path.invite_id, {
          realmUrl: realmUrl(config, realm),
          maxPerDay: config.CHAT_MAX_INVITES_PER_DAY,
        });
        return {};
      },
    ),
    revokeInviteLink: userEndpoint(
      {
        pathParams: ["invite_id"],
        operationId: "revoke-invite-link",
        summary: "Revoke a reusable invitation link",
        tag: "invites",
        params: {},
      },
      async ({ user, path }) => {
        await doRevokeReusableInvite(db, user, path.invite_id);
        return {};
      },
    ),
  };
}
