import { activeUserIds } from "../db/queries/users";
import { groupNameTaken, updateUserGroup } from "../db/queries/user-groups";
import type { Database } from "../db/database";
import { JsonableError } from "@repo/envelope";
import { sendEvent } from "../realtime/queue";
import { codePoints } from "../lib/text";
import { type GroupSettingUpdate, changeGroupSetting } from "./group-settings";
import { GROUP_SETTINGS, type GroupSettingName } from "./user-groups";
import { accessGroupForUpdate } from "./user-group-members";

/** A group name's longest length (Zulip's). */
const MAX_GROUP_NAME_LENGTH = 100;
/** Prefixes a group's name may not start with: they are Zulip's syntax for mentions and system groups. */
const RESERVED_NAME_PREFIXES = ["@", "role:", "user:", "stream:", "channel:"];

/** `name` checked as Zulip checks a user group's name; answers it. */
export function checkGroupName(name: string): string {
  if (name.trim() === "") throw new JsonableError("User group name can't be empty!");
  if (codePoints(name) > MAX_GROUP_NAME_LENGTH)
    throw new JsonableError(`User group name cannot exceed ${MAX_GROUP_NAME_LENGTH} characters.`);
  const reserved = RESERVED_NAME_PREFIXES.find((prefix) => name.startsWith(prefix));
  if (reserved !== undefined)
    throw new JsonableError(`User group name cannot start with '${reserved}'.`);
  return name;
}

/** What PATCH /user_groups/{user_group_id} asks to change (undefined: unchanged). */
export interface UserGroupUpdate {
  name?: string | undefined;
  description?: string | undefined;
  settings: Partial<Record<GroupSettingName, GroupSettingUpdate>>;
}

/**
 * PATCH /user_groups/{user_group_id}: a group's name, description and
 * permission settings, by those who manage it (its `can_manage_group`, or
 * the realm's `can_manage_all_groups`); deactivated groups too (feature
 * level 340). One transaction, with a `user_group` `update` event per
 * property that changed.
 */
export async function doUpdateUserGroup(
  db: Database,
  user: { id: number; realm_id: number },
  groupId: number,
  update: UserGroupUpdate,
): Promise<void> {
  const settings = GROUP_SETTINGS.filter((name) => update.settings[name] !== undefined);
  if (update.name === undefined && update.description === undefined && settings.length === 0)
    throw new JsonableError("No new data supplied");
  const group = await accessGroupForUpdate(db, user, groupId, "can_manage_group_id");
  const name = update.name === undefined ? undefined : checkGroupName(update.name);
  await db.transaction(async (tx) => {
    const data: Record<string, string | number> = {};
    const changes: Record<string, unknown>[] = [];
    if (name !== undefined && name !== group.name) {
      if (await groupNameTaken(tx, user.realm_id, name))
        throw new JsonableError(`User group '${name}' already exists.`);
      data.name = name;
      changes.push({ name });
    }
    if (update.description !== undefined && update.description !== group.description) {
      data.description = update.description;
      changes.push({ description: update.description });
    }
    for (const setting of settings) {
      const change = update.settings[setting];
      if (change === undefined) continue;
      const next = await changeGroupSetting(tx, user.realm_id, group[`${setting}_id`], change);
      if (next === undefined) continue;
      data[`${setting}_id`] = next;
      changes.push({ [setting]: change.new });
    }
    if (changes.length === 0) return;
    await updateUserGroup(tx, group.id, data);
    const audience = await activeUserIds(tx, user.realm_id);
    for (const change of changes)
      await sendEvent(tx, audience, {
        type: "user_group",
        op: "update",
        group_id: group.id,
        data: change,
      });
  });
}
