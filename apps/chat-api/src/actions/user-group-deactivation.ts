import { activeUserIds } from "../db/queries/users";
import { sendEvent } from "../realtime/queue";
import type { Database } from "../db/database";
import { ErrorCode, InsufficientPermissionError, JsonableError } from "@repo/envelope";
import { CHANNEL_GROUP_SETTINGS } from "./channel-settings";
import { GROUP_SETTINGS, isGroupMember } from "./user-groups";
import {
  deactivateGroup,
  liveNamedGroups,
  namedGroupInRealm,
  supergroupsOf,
} from "../db/queries/user-groups";
import { liveChannels } from "../db/queries/channels";
import { realmById } from "../db/queries/realms";

/** The realm's group settings, in the API's names. */
const REALM_GROUP_SETTINGS = [
  "can_access_all_users_group",
  "can_add_subscribers_group",
  "can_create_bots_group",
  "can_create_groups",
  "can_create_private_channel_group",
  "can_create_public_channel_group",
  "can_create_web_public_channel_group",
  "can_invite_users_group",
  "can_manage_all_groups",
] as const;

/** Why a group cannot be deactivated: Zulip's `objections`. */
type Objection =
  | { type: "subgroup"; supergroup_ids: number[] }
  | { type: "realm"; settings: string[] }
  | { type: "channel"; channel_id: number; settings: string[] }
  | { type: "user_group"; group_id: number; settings: string[] };

/**
 * Deactivates a named group in one transaction: the caller manages it (the
 * group's `can_manage_group` or the realm's `can_manage_all_groups`), and no
 * active group has it as a subgroup and no setting of the realm, an active
 * channel or an active group uses it (directly or in an anonymous group);
 * else `CANNOT_DEACTIVATE_GROUP_IN_USE` with Zulip's objections.
 */
export async function doDeactivateUserGroup(
  db: Database,
  user: { id: number; realm_id: number },
  groupId: number,
): Promise<void> {
  await db.transaction(async (tx) => {
    const group = await namedGroupInRealm(tx, user.realm_id, groupId);
    if (group === null) throw new JsonableError("Invalid user group");
    if (group.is_system_group) throw new InsufficientPermissionError();
    const realm = await realmById(tx, user.realm_id);
    let manages = false;
    for (const granting of [realm.can_manage_all_groups_id, group.can_manage_group_id]) {
      if (granting !== null && (await isGroupMember(tx, granting, user.id, false))) manages = true;
    }
    if (!manages) throw new InsufficientPermissionError();
    if (group.deactivated) throw new JsonableError("User group is already deactivated.");

    const supergroups = await supergroupsOf(tx, group.id);
    // The group itself, and the anonymous groups (setting values) that contain it.
    const uses = new Set([
      group.id,
      ...supergroups.filter((s) => s.supergroup.name === null).map((s) => s.supergroup_id),
    ]);
    const objections: Objection[] = [];
    const named = supergroups
      .filter((s) => s.supergroup.name !== null && !s.supergroup.deactivated)
      .map((s) => s.supergroup_id)
      .sort((a, b) => a - b);
    if (named.length > 0) objections.push({ type: "subgroup", supergroup_ids: named });
    const realmSettings = REALM_GROUP_SETTINGS.filter((name) =>
      uses.has(realm[`${name}_id`] ?? -1),
    );
    if (realmSettings.length > 0) objections.push({ type: "realm", settings: realmSettings });
    for (const channel of await liveChannels(tx, user.realm_id)) {
      const settings = CHANNEL_GROUP_SETTINGS.filter((name) => uses.has(channel[`${name}_id`]));
      if (settings.length > 0)
        objections.push({ type: "channel", channel_id: channel.id, settings });
    }
    for (const other of await liveNamedGroups(tx, user.realm_id)) {
      const settings = GROUP_SETTINGS.filter((name) => uses.has(other[`${name}_id`] ?? -1));
      if (settings.length > 0 && other.id !== group.id)
        objections.push({ type: "user_group", group_id: other.id, settings });
    }
    if (objections.length > 0) {
      throw new JsonableError(
        "Cannot deactivate user group in use.",
        ErrorCode.CANNOT_DEACTIVATE_GROUP_IN_USE,
        400,
        { objections },
      );
    }
    await deactivateGroup(tx, group.id);
    // Shaped per queue: a `remove` for clients that cannot filter deactivated groups.
    await sendEvent(tx, await activeUserIds(tx, user.realm_id), {
      type: "user_group",
      op: "update",
      group_id: group.id,
      data: { deactivated: true },
    });
  });
}
