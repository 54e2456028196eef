import type { Tx } from "../db/kysely";
import { JsonableError } from "@repo/envelope";
import {
  firstUnknownGroup,
  groupsWithMembers,
  insertUserGroup,
  namedGroupInRealm,
} from "../db/queries/user-groups";
import { usersAmong } from "../db/queries/users";

/** A group-setting value on the wire: a group id, or a set of users and groups (stored as an anonymous group). */
export type GroupSettingValue = number | { direct_members: number[]; direct_subgroups: number[] };

/**
 * Stores a group-setting value in transaction `tx` and returns the group id to
 * point the setting at: a named group of the realm as is; a set as a new
 * anonymous group (deactivated users dropped, feature level 303), or the one
 * subgroup itself when the set is exactly one subgroup and no users, as Zulip does.
 */
export async function storeGroupSetting(
  tx: Tx,
  realmId: number,
  value: GroupSettingValue,
): Promise<number> {
  if (typeof value === "number") {
    const group = await namedGroupInRealm(tx, realmId, value);
    if (group === null) throw new JsonableError("Invalid user group");
    return group.id;
  }
  const subgroupIds = [...new Set(value.direct_subgroups)];
  const unknownGroup = await firstUnknownGroup(tx, realmId, subgroupIds, false);
  if (unknownGroup !== undefined) throw new JsonableError(`Invalid user group ID: ${unknownGroup}`);
  const memberIds = [...new Set(value.direct_members)];
  const users = await usersAmong(tx, realmId, memberIds);
  const unknownUser = memberIds.find((id) => !users.some((u) => u.id === id));
  if (unknownUser !== undefined) throw new JsonableError(`Invalid user ID: ${unknownUser}`);
  const active = users.filter((u) => u.is_active).map((u) => u.id);
  const only = subgroupIds[0];
  if (active.length === 0 && subgroupIds.length === 1 && only !== undefined) return only;
  return insertUserGroup(tx, { realm_id: realmId, name: null }, active, subgroupIds);
}

/** How a setting that points at `groupId` reads on the wire. */
export async function readGroupSetting(tx: Tx, groupId: number): Promise<GroupSettingValue> {
  const value = (await readGroupSettings(tx, [groupId])).get(groupId);
  if (value === undefined) throw new Error(`user group ${String(groupId)} does not exist`);
  return value;
}

/**
 * {@link readGroupSetting} for many settings at once (two queries, whatever the
 * count): the wire value of every group id in `groupIds`.
 */
export async function readGroupSettings(
  tx: Tx,
  groupIds: Iterable<number>,
): Promise<Map<number, GroupSettingValue>> {
  const ids = [...new Set(groupIds)];
  const groups = await groupsWithMembers(tx, ids);
  return new Map(
    groups.map((group) => [
      group.id,
      group.name !== null
        ? group.id
        : {
            direct_members: group.members.map((m) => m.user_id).sort((a, b) => a - b),
            direct_subgroups: group.subgroups.map((s) => s.subgroup_id).sort((a, b) => a - b),
          },
    ]),
  );
}

/** A group setting's change: the new value, and the value the client believes current. */
export interface GroupSettingUpdate {
  new: GroupSettingValue;
  old?: GroupSettingValue | undefined;
}

/**
 * Applies `change` to a setting that points at `currentId` (null: unset), in
 * `tx`: checks `old` against the current value (Zulip's error when it
 * differs) and answers the group id to point the setting at, or undefined
 * when the value stays.
 */
export async function changeGroupSetting(
  tx: Tx,
  realmId: number,
  currentId: number | null,
  change: GroupSettingUpdate,
): Promise<number | undefined> {
  const current = currentId === null ? null : await readGroupSetting(tx, currentId);
  const same = (a: GroupSettingValue, b: GroupSettingValue | null) =>
    JSON.stringify(a) === JSON.stringify(b);
  if (change.old !== undefined && !same(change.old, current))
    throw new JsonableError("'old' value does not match the expected value.");
  if (same(change.new, current)) return undefined;
  return storeGroupSetting(tx, realmId, change.new);
}
