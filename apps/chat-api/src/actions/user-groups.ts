import type { Tx } from "../db/kysely";
import type { Database } from "../db/database";
import { InsufficientPermissionError, JsonableError } from "@repo/envelope";
import { realmAudience, sendEvent, sendEvents } from "../events/queue";
import type { UserGroup } from "../gen/prisma/client";
import { systemGroupIds } from "./realm-creation";
import { type GroupSettingValue, readGroupSettings, storeGroupSetting } from "../lib/group-setting";
import { advisoryLock, groupMembership, withSubgroups } from "../db/queries/user-groups";

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
  const realm = await tx.prisma.realm.findUniqueOrThrow({ where: { id: realmId } });
  const groupId = realm[setting];
  return groupId !== null && isGroupMember(tx, groupId, userId, false);
}

/** Which group setting grants the change (adding needs can_add_members_group, removing can_remove_members_group). */
type GroupPermission = "can_add_members_group_id" | "can_remove_members_group_id";

/**
 * A named, non-system group of the caller's realm that the caller may change:
 * a member of the realm's `can_manage_all_groups` (administrators by default),
 * of the group's `can_manage_group`, or of the setting `permission` names.
 * Deactivated groups may still be changed (feature level 391).
 */
async function accessGroupForUpdate(
  db: Database,
  user: { id: number; realm_id: number },
  groupId: number,
  permission: GroupPermission,
): Promise<UserGroup> {
  const group = await db.prisma.userGroup.findFirst({
    where: { id: groupId, realm_id: user.realm_id, name: { not: null } },
  });
  if (group === null) throw new JsonableError("Invalid user group");
  if (group.is_system_group) throw new InsufficientPermissionError();
  const realm = await db.prisma.realm.findUniqueOrThrow({ where: { id: user.realm_id } });
  for (const granting of [
    realm.can_manage_all_groups_id,
    group.can_manage_group_id,
    group[permission],
  ]) {
    if (granting !== null && (await isGroupMember(db, granting, user.id, false))) return group;
  }
  throw new InsufficientPermissionError();
}

/**
 * Adds and removes subgroups of a group in one transaction, with Zulip's
 * checks and messages: permissions, unknown groups, duplicates, cycles across
 * the whole graph, and removals of groups that are not subgroups.
 */
export async function doUpdateSubgroups(
  db: Database,
  user: { id: number; realm_id: number },
  groupId: number,
  add: readonly number[],
  remove: readonly number[],
): Promise<void> {
  if (add.length === 0 && remove.length === 0) {
    throw new JsonableError('Nothing to do. Specify at least one of "add" or "delete".');
  }
  if (add.length > 0) await accessGroupForUpdate(db, user, groupId, "can_add_members_group_id");
  if (remove.length > 0)
    await accessGroupForUpdate(db, user, groupId, "can_remove_members_group_id");
  await db.transaction((tx) => changeSubgroups(tx, user, groupId, add, remove));
}

/** {@link doUpdateSubgroups}'s change inside transaction `tx`, its permissions checked. */
async function changeSubgroups(
  tx: Tx,
  user: { id: number; realm_id: number },
  groupId: number,
  add: readonly number[],
  remove: readonly number[],
): Promise<void> {
  {
    // One change to a realm's group graph at a time, so two concurrent adds cannot close a cycle.
    await advisoryLock(tx, SUBGROUP_LOCK, user.realm_id);
    if (add.length > 0) {
      const found = await tx.prisma.userGroup.findMany({
        where: {
          id: { in: [...add] },
          realm_id: user.realm_id,
          name: { not: null },
          deactivated: false,
        },
        select: { id: true },
      });
      const known = new Set(found.map((g) => g.id));
      const unknown = add.find((id) => !known.has(id));
      if (unknown !== undefined) throw new JsonableError(`Invalid user group ID: ${unknown}`);
      const current = await tx.prisma.userGroupSubgroup.findMany({
        where: { supergroup_id: groupId },
        select: { subgroup_id: true },
      });
      const already = add.find((id) => current.some((c) => c.subgroup_id === id));
      if (already !== undefined)
        throw new JsonableError(`User group ${already} is already a subgroup of this group.`);
      if ((await withSubgroups(tx, add)).includes(groupId)) {
        throw new JsonableError(
          `User group ${groupId} is already a subgroup of one of the passed subgroups.`,
        );
      }
      await tx.prisma.userGroupSubgroup.createMany({
        data: [...new Set(add)].map((id) => ({ supergroup_id: groupId, subgroup_id: id })),
      });
      await sendEvent(tx, await realmAudience(tx, user.realm_id), {
        type: "user_group",
        op: "add_subgroups",
        group_id: groupId,
        direct_subgroup_ids: [...new Set(add)],
      });
    }
    if (remove.length > 0) {
      const current = await tx.prisma.userGroupSubgroup.findMany({
        where: { supergroup_id: groupId },
        select: { subgroup_id: true },
      });
      const missing = remove.find((id) => !current.some((c) => c.subgroup_id === id));
      if (missing !== undefined)
        throw new JsonableError(`User group ${missing} is not a subgroup of this group.`);
      await tx.prisma.userGroupSubgroup.deleteMany({
        where: { supergroup_id: groupId, subgroup_id: { in: [...remove] } },
      });
      await sendEvent(tx, await realmAudience(tx, user.realm_id), {
        type: "user_group",
        op: "remove_subgroups",
        group_id: groupId,
        direct_subgroup_ids: [...new Set(remove)],
      });
    }
  }
}

/**
 * POST /user_groups/{id}/members: adds and removes members (active users of
 * the realm) in one transaction, with `add_members`/`remove_members` events
 * to the realm; Zulip's checks: the group's `can_add_members_group` and
 * `can_remove_members_group` (or managing it), users already in it or not
 * in it. Subgroups given with it change as {@link doUpdateSubgroups} does,
 * in the same transaction.
 */
export async function doUpdateMembers(
  db: Database,
  user: { id: number; realm_id: number },
  groupId: number,
  change: {
    add: readonly number[];
    remove: readonly number[];
    addSubgroups: readonly number[];
    removeSubgroups: readonly number[];
  },
): Promise<void> {
  const { add, remove } = change;
  if (add.length + remove.length + change.addSubgroups.length + change.removeSubgroups.length === 0)
    throw new JsonableError(
      'Nothing to do. Specify at least one of "add", "delete", "add_subgroups" or "delete_subgroups".',
    );
  if (add.length + change.addSubgroups.length > 0)
    await accessGroupForUpdate(db, user, groupId, "can_add_members_group_id");
  if (remove.length + change.removeSubgroups.length > 0)
    await accessGroupForUpdate(db, user, groupId, "can_remove_members_group_id");
  await db.transaction(async (tx) => {
    const group = await tx.prisma.userGroup.findUniqueOrThrow({ where: { id: groupId } });
    if (group.deactivated) throw new JsonableError("User group is deactivated.");
    const adding = [...new Set(add)];
    const removing = [...new Set(remove)];
    if (adding.length + removing.length > 0)
      await changeMembers(tx, user, groupId, adding, removing);
    if (change.addSubgroups.length > 0 || change.removeSubgroups.length > 0)
      await changeSubgroups(tx, user, groupId, change.addSubgroups, change.removeSubgroups);
  });
}

/** {@link doUpdateMembers}'s change of members inside transaction `tx`, its permissions checked. */
async function changeMembers(
  tx: Tx,
  user: { id: number; realm_id: number },
  groupId: number,
  adding: readonly number[],
  removing: readonly number[],
): Promise<void> {
  {
    const current = new Set(
      (
        await tx.prisma.userGroupMember.findMany({
          where: { group_id: groupId, user_id: { in: [...adding, ...removing] } },
          select: { user_id: true },
        })
      ).map((m) => m.user_id),
    );
    if (adding.length > 0) {
      const active = new Set(
        (
          await tx.prisma.user.findMany({
            where: { id: { in: [...adding] }, realm_id: user.realm_id, is_active: true },
            select: { id: true },
          })
        ).map((u) => u.id),
      );
      const invalid = adding.find((id) => !active.has(id));
      if (invalid !== undefined) throw new JsonableError(`Invalid user ID: ${invalid}`);
      const member = adding.find((id) => current.has(id));
      if (member !== undefined)
        throw new JsonableError(`User ${member} is already a member of this group`);
      await tx.prisma.userGroupMember.createMany({
        data: adding.map((user_id) => ({ group_id: groupId, user_id })),
      });
    }
    if (removing.length > 0) {
      const absent = removing.find((id) => !current.has(id));
      if (absent !== undefined)
        throw new JsonableError(`There is no member '${absent}' in this user group`);
      await tx.prisma.userGroupMember.deleteMany({
        where: { group_id: groupId, user_id: { in: [...removing] } },
      });
    }
    const audience = await realmAudience(tx, user.realm_id);
    await sendEvents(tx, [
      ...(adding.length === 0
        ? []
        : [
            {
              userIds: audience,
              event: {
                type: "user_group",
                op: "add_members",
                group_id: groupId,
                user_ids: adding,
              },
            },
          ]),
      ...(removing.length === 0
        ? []
        : [
            {
              userIds: audience,
              event: {
                type: "user_group",
                op: "remove_members",
                group_id: groupId,
                user_ids: removing,
              },
            },
          ]),
    ]);
  }
}

/** Advisory lock class of subgroup changes (the second key is the realm). */
const SUBGROUP_LOCK = 72_071;

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
    const taken = await tx.prisma.userGroup.findFirst({
      where: { realm_id: user.realm_id, name: group.name },
    });
    if (taken !== null) throw new JsonableError(`User group '${group.name}' already exists.`);
    const members = [...new Set(group.members)];
    const found = await tx.prisma.user.findMany({
      where: { id: { in: members }, realm_id: user.realm_id, is_active: true },
    });
    const unknownUser = members.find((id) => !found.some((u) => u.id === id));
    if (unknownUser !== undefined) throw new JsonableError(`Invalid user ID: ${unknownUser}`);
    const subgroups = [...new Set(group.subgroups)];
    const groups = await tx.prisma.userGroup.findMany({
      where: {
        id: { in: subgroups },
        realm_id: user.realm_id,
        name: { not: null },
        deactivated: false,
      },
    });
    const unknownGroup = subgroups.find((id) => !groups.some((g) => g.id === id));
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
    const created = await tx.prisma.userGroup.create({
      data: {
        realm_id: user.realm_id,
        name: group.name,
        description: group.description,
        creator_id: user.id,
        ...settings,
        members: { create: members.map((user_id) => ({ user_id })) },
        subgroups: { create: subgroups.map((subgroup_id) => ({ subgroup_id })) },
      },
    });
    const [view] = await userGroupViews(tx, [created.id]);
    await sendEvent(tx, await realmAudience(tx, user.realm_id), {
      type: "user_group",
      op: "add",
      group: view,
    });
    return created.id;
  });
}

/** The realm's named groups as GET /user_groups describes them. */
export async function listUserGroups(tx: Tx, realmId: number, includeDeactivated: boolean) {
  const rows = await tx.prisma.userGroup.findMany({
    where: {
      realm_id: realmId,
      name: { not: null },
      ...(includeDeactivated ? {} : { deactivated: false }),
    },
    select: { id: true },
    orderBy: { id: "asc" },
  });
  return userGroupViews(
    tx,
    rows.map((r) => r.id),
  );
}

/** Groups as GET /user_groups and the `user_group` events describe them, in id order. */
export async function userGroupViews(tx: Tx, ids: readonly number[]) {
  const groups = await tx.prisma.userGroup.findMany({
    where: { id: { in: [...ids] } },
    include: { members: { where: { user: { is_active: true } } }, subgroups: true },
    orderBy: { id: "asc" },
  });
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
