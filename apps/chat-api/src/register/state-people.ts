import { botsOf, systemBotIds } from "../db/queries/bots";
import type { Database } from "../db/database";
import type { Realm } from "../gen/prisma/client";
import { hasRealmPermission } from "../actions/user-groups";
import { gravatarUrl, listUsers } from "../actions/user-view";
import type { AuthedUser } from "../caches/auth";
import { Role, isAdministrator, isGuest, isOwner } from "../lib/roles";

/**
 * The `realm_user` state: the realm's people (`realm_users`, deactivated ones
 * in `realm_non_active_users`, system bots in `cross_realm_bots`) and what
 * the user may do, as Zulip's `realm_user` part of `register` gives it.
 */
export async function peopleState(
  db: Database,
  realm: Realm,
  user: AuthedUser,
  clientGravatar: boolean,
) {
  const people = await listUsers(db, realm.id, user, {
    clientGravatar,
    customProfileFields: true,
  });
  const systemBots = new Set(await systemBotIds(db, realm.id));
  const may = (setting: Parameters<typeof hasRealmPermission>[2]) =>
    hasRealmPermission(db, realm.id, setting, user.id);
  const [publicChannels, privateChannels, webPublicChannels, invite] = await Promise.all([
    may("can_create_public_channel_group_id"),
    may("can_create_private_channel_group_id"),
    may("can_create_web_public_channel_group_id"),
    may("can_invite_users_group_id"),
  ]);
  return {
    realm_users: people.filter((p) => p.is_active && !systemBots.has(p.user_id)),
    realm_non_active_users: people.filter((p) => !p.is_active && !systemBots.has(p.user_id)),
    cross_realm_bots: people
      .filter((p) => systemBots.has(p.user_id))
      .map((p) => ({ ...p, is_system_bot: true })),
    avatar_source: "G",
    avatar_url: gravatarUrl(user.delivery_email),
    avatar_url_medium: gravatarUrl(user.delivery_email),
    can_create_private_streams: privateChannels,
    can_create_public_streams: publicChannels,
    can_create_streams: privateChannels || publicChannels,
    can_create_web_public_streams: webPublicChannels,
    can_invite_others_to_realm: invite,
    delivery_email: user.delivery_email,
    email: user.email,
    full_name: user.full_name,
    is_admin: isAdministrator(user.role),
    is_billing_admin: false,
    is_guest: isGuest(user.role),
    is_moderator: user.role === Role.MODERATOR,
    is_owner: isOwner(user.role),
    user_id: user.id,
  };
}

/** `realm_bots`: the bots the user may administer (their own; every bot for administrators). */
export async function ownBots(db: Database, user: AuthedUser) {
  const bots = await botsOf(db, user.realm_id, user.id, isAdministrator(user.role));
  return bots.map((bot) => ({
    user_id: bot.id,
    full_name: bot.full_name,
    api_key: bot.api_key,
    avatar_url: gravatarUrl(bot.delivery_email),
    bot_type: bot.bot_type,
    default_all_public_streams: false,
    default_events_register_stream: null,
    default_sending_stream: null,
    email: bot.email,
    is_active: bot.is_active,
    owner_id: bot.bot_owner_id,
    services: [],
  }));
}
