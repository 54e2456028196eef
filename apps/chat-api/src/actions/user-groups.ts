import { activeUserIds, firstInactiveOrUnknown } from "../db/queries/users";
import type { Tx } from "../db/kysely";
import type { Database } from "../db/database";
import { InsufficientPermissionError, JsonableError } from "@repo/envelope";
import { sendEvent } from "../realtime/queue";
import { systemGroupIds } from "./realm-creation";
import { type GroupSettingValue, readGroupSettings, storeGroupSetting } from "./group-settings";
import {
  activeMembersOfGroups,
  firstUnknownGroup,
  groupMembership,
  groupNameTaken,
  groupsWithMembers,
  insertUserGroup,
  namedGroupIds,
  namedGroupInRealm,
  subgroupIdsOf,
  withSubgroups,
} from "../db/queries/user-groups";
import { realmById } from "../db/queries/realms";

/**
 * Whether `userId` is a member of `groupId`: directly, or (unless `directOnly`)
 * through subgroups at any depth. Deactivated users are never members (feature
 * level 303). One recursive query, whatever the depth; cycles cannot loop it
 * (UNION drops groups already seen).
 */
export async function isGroupMember(
  tx: Tx,
  groupId: number,
  userId: number,
  directOnly: boolean,
): Promise<boolean> {
  return (await groupMembership(tx, groupId, null, userId, directOnly)).member;
}

/**
 * GET /user_groups/{id}/members/{user_id} in one statement: the group and the
 * user must be the realm's ("Invalid user group", then "No such user"; bots
 * can be asked about too, feature level 458), then membership as
 * {@link isGroupMember} decides it.
 */
export async function realmGroupMembership(
  tx: Tx,
  realmId: number,
  groupId: number,
  userId: number,
  directOnly: boolean,
): Promise<boolean> {
  const row = await groupMembership(tx, groupId, realmId, userId, directOnly);
  if (!row.group_found) throw new JsonableError("Invalid user group");
  if (!row.user_found) throw new JsonableError("No such user");
  return row.member;
}

/** A realm permission held by a group setting (`can_invite_users_group`...), as its column name. */
export type RealmPermission =
  | "can_access_all_users_group_id"
  | "can_create_bots_group_id"
  | "can_create_groups_id"
  | "can_create_private_channel_group_id"
  | "can_create_public_channel_group_id"
  | "can_create_web_public_channel_group_id"
  | "can_invite_users_group_id";

/** Whether `userId` holds the realm permission `setting` (is in the group it names, at any depth). */
export async function hasRealmPermission(
  tx: Tx,
  realmId: number,
  setting: RealmPermission,
  userId: number,
): Promise<boolean> {
  const groupId = (await realmById(tx, realmId))[setting];
  return groupId !== null && isGroupMember(tx, groupId, userId, false);
}

/** Which group setting grants the change (adding needs can_add_members_group, removing can_remove_members_group). */

/** The six settings of a user group, in the API's names. */
export const GROUP_SETTINGS = [
  "can_add_members_group",
  "can_join_group",
  "can_leave_group",
  "can_manage_group",
  "can_mention_group",
  "can_remove_members_group",
] as const;

/** One of {@link GROUP_SETTINGS}. */
export type GroupSettingName = (typeof GROUP_SETTINGS)[number];

/** What POST /user_groups/create asks for. */
export interface NewUserGroup {
  name: string;
  description: string;
  members: readonly number[];
  subgroups: readonly number[];
  settings: Partial<Record<GroupSettingName, GroupSettingValue>>;
}

/**
 * Creates a named group in one transaction: permission from the realm's
 * `can_create_groups`, a unique name, members and subgroups of the realm, and
 * each setting (Zulip's defaults where none is given: the creator manages it,
 * everyone may mention it and leave it, nobody else may join or change members).
 */
export async function doCreateUserGroup(
  db: Database,
  user: { id: number; realm_id: number },
  group: NewUserGroup,
): Promise<number> {
  if (!(await hasRealmPermission(db, user.realm_id, "can_create_groups_id", user.id)))
    throw new InsufficientPermissionError();
  return db.transaction(async (tx) => {
    if (await groupNameTaken(tx, user.realm_id, group.name))
      throw new JsonableError(`User group '${group.name}' already exists.`);
    const members = [...new Set(group.members)];
    const unknownUser = await firstInactiveOrUnknown(tx, user.realm_id, members);
    if (unknownUser !== undefined) throw new JsonableError(`Invalid user ID: ${unknownUser}`);
    const subgroups = [...new Set(group.subgroups)];
    const unknownGroup = await firstUnknownGroup(tx, user.realm_id, subgroups, true);
    if (unknownGroup !== undefined)
      throw new JsonableError(`Invalid user group ID: ${unknownGroup}`);
    const system = await systemGroupIds(tx, user.realm_id);
    const defaults: Record<GroupSettingName, GroupSettingValue> = {
      can_add_members_group: system["role:nobody"],
      can_join_group: system["role:nobody"],
      can_leave_group: system["role:everyone"],
      can_manage_group: { direct_members: [user.id], direct_subgroups: [] },
      can_mention_group: system["role:everyone"],
      can_remove_members_group: system["role:nobody"],
    };
    const settings: Partial<Record<`${GroupSettingName}_id`, number>> = {};
    for (const name of GROUP_SETTINGS) {
      settings[`${name}_id`] = await storeGroupSetting(
        tx,
        user.realm_id,
        group.settings[name] ?? defaults[name],
      );
    }
    const createdId = await insertUserGroup(
      tx,
      {
        realm_id: user.realm_id,
        name: group.name,
        description: group.description,
        creator_id: user.id,
        ...settings,
      },
      members,
      subgroups,
    );
    const [view] = await userGroupViews(tx, [createdId]);
    await sendEvent(tx, await activeUserIds(tx, user.realm_id), {
      type: "user_group",
      op: "add",
      group: view,
    });
    return createdId;
  });
}

/** The realm's named groups as GET /user_groups describes them. */
export async function listUserGroups(tx: Tx, realmId: number, includeDeactivated: boolean) {
  return userGroupViews(tx, await namedGroupIds(tx, realmId, includeDeactivated));
}

/** Groups as GET /user_groups and the `user_group` events describe them, in id order. */
export async function userGroupViews(tx: Tx, ids: readonly number[]) {
  const groups = await groupsWithMembers(tx, ids);
  const values = await readGroupSettings(
    tx,
    groups.flatMap((g) => GROUP_SETTINGS.map((name) => g[`${name}_id`] ?? -1)),
  );
  return groups.map((g) => {
    const settings: Partial<Record<GroupSettingName, GroupSettingValue>> = {};
    for (const name of GROUP_SETTINGS) {
      const value = values.get(g[`${name}_id`] ?? -1);
      if (value !== undefined) settings[name] = value;
    }
    return {
      description: g.description,
      id: g.id,
      // System groups predate any user: Zulip reports no creation time or creator for them.
      date_created: g.is_system_group ? null : Math.floor(g.date_created.getTime() / 1000),
      creator_id: g.creator_id,
      members: g.members.map((m) => m.user_id).sort((a, b) => a - b),
      direct_subgroup_ids: g.subgroups.map((s) => s.subgroup_id).sort((a, b) => a - b),
      name: g.name ?? "",
      is_system_group: g.is_system_group,
      ...settings,
      deactivated: g.deactivated,
    };
  });
}

/** A named group of the realm (system groups included, deactivated ones too), else `Invalid user group`. */
async function readableGroup(tx: Tx, realmId: number, groupId: number): Promise<void> {
  if ((await namedGroupInRealm(tx, realmId, groupId)) === null)
    throw new JsonableError("Invalid user group");
}

/**
 * GET /user_groups/{id}/members (feature level 127): the group's active
 * members by id, its subgroups' too unless `directOnly`.
 */
export async function groupMembers(
  tx: Tx,
  realmId: number,
  groupId: number,
  directOnly: boolean,
): Promise<number[]> {
  await readableGroup(tx, realmId, groupId);
  return activeMembersOfGroups(tx, directOnly ? [groupId] : await withSubgroups(tx, [groupId]));
}

/**
 * GET /user_groups/{id}/subgroups (feature level 127): the group's subgroups
 * by id, their subgroups too unless `directOnly`.
 */
export async function groupSubgroups(
  tx: Tx,
  realmId: number,
  groupId: number,
  directOnly: boolean,
): Promise<number[]> {
  await readableGroup(tx, realmId, groupId);
  const ids = directOnly
    ? await subgroupIdsOf(tx, groupId)
    : (await withSubgroups(tx, [groupId])).filter((id) => id !== groupId);
  return [...new Set(ids)].sort((a, b) => a - b);
}
