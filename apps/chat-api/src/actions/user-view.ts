import { realmUsers, userByIdOrAddress, userWithProfile } from "../db/queries/users";
import { newestMessageId } from "../db/queries/unreads";
import type { Database } from "../db/database";
import { createHash } from "node:crypto";
import { JsonableError } from "@repo/envelope";
import type { CustomProfileFieldValue, User } from "../gen/prisma/client";
import type { AuthedUser } from "../caches/auth";
import { isAdministrator, isGuest, isOwner } from "../lib/roles";

/** A user as GET /users and GET /users/me describe one (Zulip's user dictionary). */
export interface UserView {
  avatar_url: string | null;
  avatar_version: number;
  email: string;
  full_name: string;
  is_admin: boolean;
  is_owner: boolean;
  role: number;
  is_guest: boolean;
  is_bot: boolean;
  is_active: boolean;
  timezone: string;
  date_joined: string;
  user_id: number;
  delivery_email: string | null;
  bot_type?: number | null;
  bot_owner_id?: number | null;
  profile_data?: Record<string, { value: string; rendered_value: string | null }>;
}

/** The Gravatar URL of an address (what clients compute themselves under `client_gravatar`). */
export function gravatarUrl(email: string): string {
  const hash = createHash("md5").update(email.toLowerCase()).digest("hex");
  return `https://secure.gravatar.com/avatar/${hash}?d=identicon&version=1`;
}

/**
 * The wire form of `user`: `delivery_email` only when `showDeliveryEmail`
 * (administrators, and the user themself), `avatar_url` null under
 * `clientGravatar`, bot fields for bots, and profile data when loaded.
 */
export function userView(
  user: User & { custom_profile_values?: CustomProfileFieldValue[] },
  options: { showDeliveryEmail: boolean; clientGravatar: boolean },
): UserView {
  return {
    avatar_url: options.clientGravatar ? null : gravatarUrl(user.delivery_email),
    avatar_version: 1,
    email: user.email,
    full_name: user.full_name,
    is_admin: isAdministrator(user.role),
    is_owner: isOwner(user.role),
    role: user.role,
    is_guest: isGuest(user.role),
    is_bot: user.is_bot,
    is_active: user.is_active,
    timezone: user.timezone,
    date_joined: user.date_joined.toISOString(),
    user_id: user.id,
    delivery_email: options.showDeliveryEmail ? user.delivery_email : null,
    ...(user.is_bot ? { bot_type: user.bot_type, bot_owner_id: user.bot_owner_id } : {}),
    ...(user.custom_profile_values === undefined
      ? {}
      : {
          profile_data: Object.fromEntries(
            user.custom_profile_values.map((v) => [
              String(v.field_id),
              { value: v.value, rendered_value: v.rendered_value },
            ]),
          ),
        }),
  };
}

/** GET /users/me: the user's own dictionary, without bot fields, with `max_message_id`. */
export async function ownUser(
  db: Database,
  userId: number,
): Promise<Omit<UserView, "bot_type" | "bot_owner_id"> & { max_message_id: number }> {
  const row = await userWithProfile(db, userId);
  const newest = await newestMessageId(db, userId);
  // Zulip's own-user answer has no bot fields (GET /users has them).
  const {
    bot_type: _type,
    bot_owner_id: _owner,
    ...view
  } = userView(row, { showDeliveryEmail: true, clientGravatar: false });
  return { ...view, max_message_id: newest };
}

/** GET /users: every user of the realm as `viewer` may see them, by id. */
export async function listUsers(
  db: Database,
  realmId: number,
  viewer: AuthedUser,
  options: { clientGravatar: boolean; customProfileFields: boolean },
): Promise<UserView[]> {
  const rows = await realmUsers(db, realmId, options.customProfileFields);
  return rows.map((row) => viewerView(row, viewer, options.clientGravatar));
}

/**
 * `row` as `viewer` sees it in GET /users and GET /users/{id}: the delivery
 * address for administrators and oneself, profile data for humans only (Zulip's).
 */
function viewerView(
  row: User & { custom_profile_values?: CustomProfileFieldValue[] },
  viewer: AuthedUser,
  clientGravatar: boolean,
): UserView {
  const view = userView(row, {
    showDeliveryEmail: isAdministrator(viewer.role) || row.id === viewer.id,
    clientGravatar,
  });
  if (row.is_bot) delete view.profile_data;
  return view;
}

/**
 * GET /users/{user_id} and GET /users/{email}: one user of the caller's realm,
 * active or not, by id or by address (the public address, or the delivery
 * address for those who may see it; any case); else `No such user`.
 */
export async function userByRef(
  db: Database,
  viewer: AuthedUser,
  ref: number | string,
  options: { clientGravatar: boolean; customProfileFields: boolean },
): Promise<UserView> {
  const admin = isAdministrator(viewer.role);
  const row = await userByIdOrAddress(db, viewer.realm_id, ref, admin, options.customProfileFields);
  if (row === null) throw new JsonableError("No such user");
  return viewerView(row, viewer, options.clientGravatar);
}
