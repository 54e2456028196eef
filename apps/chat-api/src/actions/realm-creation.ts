import { insertRealm, updateRealm } from "../db/queries/realms";
import { insertSubgroupLinks } from "../db/queries/user-groups";
import {
  insertSystemGroup,
  setSystemGroupSettings,
  systemGroupsOf,
} from "../db/queries/system-groups";
import type { Tx } from "../db/kysely";
import { JsonableError } from "@repo/envelope";
import { Role } from "../lib/roles";
import { codePoints } from "../lib/text";

/** System groups, each containing the next by subgroup (role:owners is in role:administrators...). */
export const SYSTEM_GROUPS = [
  "role:owners",
  "role:administrators",
  "role:moderators",
  "role:fullmembers",
  "role:members",
  "role:everyone",
  "role:internet",
] as const;

/** The system group a role's users are direct members of. */
export const GROUP_OF_ROLE: Record<number, (typeof SYSTEM_GROUPS)[number]> = {
  [Role.OWNER]: "role:owners",
  [Role.ADMINISTRATOR]: "role:administrators",
  [Role.MODERATOR]: "role:moderators",
  [Role.MEMBER]: "role:fullmembers",
  [Role.GUEST]: "role:everyone",
};

/** A system group's name. */
export type SystemGroupName = (typeof SYSTEM_GROUPS)[number] | "role:nobody";

/** An organization name's longest length (Zulip's `MAX_REALM_NAME_LENGTH`). */
export const MAX_REALM_NAME_LENGTH = 40;

/**
 * An organization's name, trimmed, checked with Zulip's rules, and without
 * control characters: the name is in e-mails' subjects, where a line break
 * would be refused (header injection) and stop the realm's e-mails.
 */
export function checkRealmName(name: string): string {
  const trimmed = name.trim();
  if (trimmed === "") throw new JsonableError("Organization name can't be empty.");
  if (codePoints(trimmed) > MAX_REALM_NAME_LENGTH)
    throw new JsonableError("Organization name is too long.");
  if (/\p{Cc}/u.test(trimmed)) throw new JsonableError("Invalid characters in organization name.");
  return trimmed;
}

/**
 * Creates a realm with its system groups and Zulip's default permission
 * settings; returns the realm id and the system groups by name.
 */
export async function createRealm(
  tx: Tx,
  realm: { subdomain: string; name: string; description?: string },
): Promise<{ realmId: number; groups: Record<SystemGroupName, number> }> {
  const realmId = await insertRealm(tx, { ...realm, name: checkRealmName(realm.name) });
  const groups = {} as Record<SystemGroupName, number>;
  for (const name of [...SYSTEM_GROUPS, "role:nobody"] as const) {
    groups[name] = await insertSystemGroup(tx, realmId, name);
  }
  await insertSubgroupLinks(
    tx,
    SYSTEM_GROUPS.slice(1).map((name, i) => ({
      supergroup_id: groups[name],
      subgroup_id: groups[SYSTEM_GROUPS[i] ?? "role:owners"],
    })),
  );
  const nobody = groups["role:nobody"];
  await setSystemGroupSettings(tx, realmId, {
    can_add_members_group_id: nobody,
    can_join_group_id: nobody,
    can_leave_group_id: nobody,
    can_manage_group_id: nobody,
    can_mention_group_id: groups["role:everyone"],
    can_remove_members_group_id: nobody,
  });
  await updateRealm(tx, realmId, {
    can_create_public_channel_group_id: groups["role:members"],
    can_create_private_channel_group_id: groups["role:members"],
    can_create_web_public_channel_group_id: groups["role:owners"],
    can_invite_users_group_id: groups["role:members"],
    can_create_groups_id: groups["role:members"],
    can_manage_all_groups_id: groups["role:administrators"],
    can_add_subscribers_group_id: groups["role:members"],
    can_access_all_users_group_id: groups["role:everyone"],
    can_create_bots_group_id: groups["role:members"],
  });
  return { realmId, groups };
}

/** The ids of a realm's system groups, by name. */
export async function systemGroupIds(
  tx: Tx,
  realmId: number,
): Promise<Record<SystemGroupName, number>> {
  const rows = await systemGroupsOf(tx, realmId);
  const ids = {} as Record<SystemGroupName, number>;
  for (const name of [...SYSTEM_GROUPS, "role:nobody"] as const) {
    const row = rows.find((g) => g.name === name);
    if (row === undefined) throw new Error(`realm ${realmId} has no ${name} group`);
    ids[name] = row.id;
  }
  return ids;
}

/** Zulip's defaults for a new channel's group settings. */
export function defaultChannelGroups(groups: Record<SystemGroupName, number>) {
  return {
    can_add_subscribers_group_id: groups["role:nobody"],
    can_administer_channel_group_id: groups["role:nobody"],
    can_create_topic_group_id: groups["role:everyone"],
    can_delete_any_message_group_id: groups["role:administrators"],
    can_delete_own_message_group_id: groups["role:everyone"],
    can_move_messages_out_of_channel_group_id: groups["role:nobody"],
    can_move_messages_within_channel_group_id: groups["role:nobody"],
    can_remove_subscribers_group_id: groups["role:administrators"],
    can_resolve_topics_group_id: groups["role:nobody"],
    can_send_message_group_id: groups["role:everyone"],
    can_subscribe_group_id: groups["role:nobody"],
  };
}
