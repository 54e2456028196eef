import { activeUserIds, firstInactiveOrUnknown } from "../db/queries/users";
import type { Tx } from "../db/kysely";
import type { Database } from "../db/database";
import { InsufficientPermissionError, JsonableError } from "@repo/envelope";
import { sendEvent, sendEvents } from "../realtime/queue";
import type { UserGroup } from "../gen/prisma/client";
import {
  advisoryLock,
  deleteGroupMembers,
  deleteSubgroups,
  directMembersAmong,
  firstUnknownGroup,
  insertGroupMembers,
  insertSubgroups,
  namedGroupInRealm,
  subgroupIdsOf,
  userGroupById,
  withSubgroups,
} from "../db/queries/user-groups";
import { realmById } from "../db/queries/realms";
import { isGroupMember } from "./user-groups";

/**
 * Who is in a user group: its members and subgroups, changed by the people
 * its settings allow (POST /user_groups/{id}/members and /subgroups).
 */

type GroupPermission =
  "can_add_members_group_id" | "can_remove_members_group_id" | "can_manage_group_id";

/**
 * A named, non-system group of the caller's realm that the caller may change:
 * a member of the realm's `can_manage_all_groups` (administrators by default),
 * of the group's `can_manage_group`, or of the setting `permission` names.
 * Deactivated groups may still be changed (feature level 391).
 */
export async function accessGroupForUpdate(
  db: Database,
  user: { id: number; realm_id: number },
  groupId: number,
  permission: GroupPermission,
): Promise<UserGroup> {
  const group = await namedGroupInRealm(db, user.realm_id, groupId);
  if (group === null) throw new JsonableError("Invalid user group");
  if (group.is_system_group) throw new InsufficientPermissionError();
  const realm = await realmById(db, user.realm_id);
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
  // One change to a realm's group graph at a time, so two concurrent adds cannot close a cycle.
  await advisoryLock(tx, SUBGROUP_LOCK, user.realm_id);
  if (add.length > 0) {
    const unknown = await firstUnknownGroup(tx, user.realm_id, add, true);
    if (unknown !== undefined) throw new JsonableError(`Invalid user group ID: ${unknown}`);
    const current = new Set(await subgroupIdsOf(tx, groupId));
    const already = add.find((id) => current.has(id));
    if (already !== undefined)
      throw new JsonableError(`User group ${already} is already a subgroup of this group.`);
    if ((await withSubgroups(tx, add)).includes(groupId)) {
      throw new JsonableError(
        `User group ${groupId} is already a subgroup of one of the passed subgroups.`,
      );
    }
    await insertSubgroups(tx, groupId, [...new Set(add)]);
    await sendEvent(tx, await activeUserIds(tx, user.realm_id), {
      type: "user_group",
      op: "add_subgroups",
      group_id: groupId,
      direct_subgroup_ids: [...new Set(add)],
    });
  }
  if (remove.length > 0) {
    const current = new Set(await subgroupIdsOf(tx, groupId));
    const missing = remove.find((id) => !current.has(id));
    if (missing !== undefined)
      throw new JsonableError(`User group ${missing} is not a subgroup of this group.`);
    await deleteSubgroups(tx, groupId, remove);
    await sendEvent(tx, await activeUserIds(tx, user.realm_id), {
      type: "user_group",
      op: "remove_subgroups",
      group_id: groupId,
      direct_subgroup_ids: [...new Set(remove)],
    });
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
    const group = await userGroupById(tx, groupId);
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
  const current = await directMembersAmong(tx, groupId, [...adding, ...removing]);
  if (adding.length > 0) {
    const invalid = await firstInactiveOrUnknown(tx, user.realm_id, adding);
    if (invalid !== undefined) throw new JsonableError(`Invalid user ID: ${invalid}`);
    const member = adding.find((id) => current.has(id));
    if (member !== undefined)
      throw new JsonableError(`User ${member} is already a member of this group`);
    await insertGroupMembers(tx, groupId, adding);
  }
  if (removing.length > 0) {
    const absent = removing.find((id) => !current.has(id));
    if (absent !== undefined)
      throw new JsonableError(`There is no member '${absent}' in this user group`);
    await deleteGroupMembers(tx, groupId, removing);
  }
  const audience = await activeUserIds(tx, user.realm_id);
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

/** Advisory lock class of subgroup changes (the second key is the realm). */
const SUBGROUP_LOCK = 72_071;
