import {
  activeAccountCount,
  activeOwnerIds,
  activeUserIds,
  isRealmUser,
  setRole,
  userByIdOrAddress,
} from "../db/queries/users";
import {
  deleteProfileValues,
  profileFieldsAmong,
  upsertProfileValues,
  type ProfileValueRow,
} from "../db/queries/profile-fields";
import { deleteGroupMembers, groupByName, insertGroupMembers } from "../db/queries/user-groups";
import { setFullName } from "../db/queries/user-settings";
import { queueEmail } from "../db/queries/outbox";
import type { Tx } from "../db/kysely";
import { ErrorCode, JsonableError, OrganizationOwnerRequiredError } from "@repo/envelope";
import { sendEvent } from "../realtime/queue";
import type { AuthedUser } from "../caches/auth";
import type { DatabaseAndBus } from "../caches/cache-bus";
import { Role, isOwner } from "../lib/roles";
import { codePoints } from "../lib/text";
import { checkFullName, doSetUserActive } from "./accounts";
import { GROUP_OF_ROLE } from "./realm-creation";
import { ProfileFieldType } from "./custom-profile-fields";
import { renderPreview } from "./render-context";

/**
 * What an administrator does to other people's accounts (PATCH and DELETE
 * /users/{user_id}, POST /users/{user_id}/reactivate) and what a person does
 * to their own (DELETE /users/me), with Zulip's rules: owners alone make or
 * unmake owners, the only owner stays one, and every change reaches the realm
 * through `realm_user` events and every replica's caches at once.
 */

/** A value of PATCH /users/{user_id}'s `profile_data`: a field's id and its new value (empty: remove it). */
export interface ProfileDataChange {
  id: number;
  value: string | readonly number[] | null;
}

/** What PATCH /users/{user_id} may change. */
export interface UserChange {
  fullName?: string | undefined;
  role?: number | undefined;
  profileData?: readonly ProfileDataChange[] | undefined;
}

/** Zulip's roles, the values `role` may take. */
const ROLES: readonly number[] = Object.values(Role);

/** A custom profile field's longest value, by type (Zulip's short and long text limits). */
const MAX_VALUE_LENGTH: Record<number, number> = {
  [ProfileFieldType.SHORT_TEXT]: 50,
  [ProfileFieldType.LONG_TEXT]: 500,
  [ProfileFieldType.EXTERNAL_ACCOUNT]: 50,
  [ProfileFieldType.PRONOUNS]: 50,
  [ProfileFieldType.URL]: 2048,
};

/** Types whose values are rendered as Markdown for display (`rendered_value`). */
const RENDERED_TYPES = new Set<number>([ProfileFieldType.SHORT_TEXT, ProfileFieldType.LONG_TEXT]);

/** The realm's account `ref` (an id or an address), deactivated ones and bots included; else "No such user". */
async function targetOf(tx: Tx, actor: AuthedUser, ref: number | string) {
  const row = await userByIdOrAddress(tx, actor.realm_id, ref, true, false);
  if (row === null) throw new JsonableError("No such user");
  return row;
}

/** Whether `userId` is the realm's only active human owner. */
async function isLastOwner(tx: Tx, realmId: number, userId: number): Promise<boolean> {
  const owners = await activeOwnerIds(tx, realmId);
  return owners.length === 1 && owners[0] === userId;
}

/** Renames a person inside `tx` and tells the realm (`realm_user` `update` with `full_name`). */
export async function renamePerson(
  tx: Tx,
  realmId: number,
  userId: number,
  name: string,
): Promise<void> {
  await setFullName(tx, userId, name);
  await sendEvent(tx, await activeUserIds(tx, realmId), {
    type: "realm_user",
    op: "update",
    person: { user_id: userId, full_name: name },
  });
}

/**
 * Checks `changes` against the realm's fields (Zulip's messages) and renders
 * the text values, before any transaction: answers the rows to store and the
 * fields to clear.
 */
async function checkProfileData(
  deps: DatabaseAndBus,
  actor: AuthedUser,
  changes: readonly ProfileDataChange[],
): Promise<{ set: ProfileValueRow[]; clear: number[] }> {
  const ids = [...new Set(changes.map((c) => c.id))];
  const fields = await profileFieldsAmong(deps.db, actor.realm_id, ids);
  const set: ProfileValueRow[] = [];
  const clear: number[] = [];
  for (const change of changes) {
    const field = fields.find((f) => f.id === change.id);
    if (field === undefined) throw new JsonableError(`Field id ${change.id} not found.`);
    const { value } = change;
    if (value === null || value === "" || (Array.isArray(value) && value.length === 0)) {
      clear.push(field.id);
      continue;
    }
    const name = field.name;
    let stored: string;
    if (field.field_type === ProfileFieldType.USER) {
      if (!Array.isArray(value)) throw new JsonableError(`${name} is not a list`);
      const userIds = value as readonly number[];
      for (const id of userIds)
        if (!(await isRealmUser(deps.db, actor.realm_id, id)))
          throw new JsonableError(`Invalid user ID: ${id}`);
      stored = JSON.stringify([...new Set(userIds)]);
    } else {
      if (typeof value !== "string") throw new JsonableError(`${name} is not a string`);
      const limit = MAX_VALUE_LENGTH[field.field_type];
      if (limit !== undefined && codePoints(value) > limit)
        throw new JsonableError(`${name} is too long (limit: ${limit} characters)`);
      if (field.field_type === ProfileFieldType.SELECT) {
        const choices = field.field_data === "" ? {} : (JSON.parse(field.field_data) as object);
        if (!Object.hasOwn(choices, value))
          throw new JsonableError(`'${value}' is not a valid choice for '${name}'.`);
      }
      if (field.field_type === ProfileFieldType.DATE && !isDate(value))
        throw new JsonableError(`${name} is not a date`);
      if (field.field_type === ProfileFieldType.URL && !isWebUrl(value))
        throw new JsonableError(`${name} is not a URL`);
      stored = value;
    }
    const rendered = RENDERED_TYPES.has(field.field_type)
      ? await renderPreview(deps.db, actor, stored)
      : null;
    set.push({ field_id: field.id, value: stored, rendered_value: rendered });
  }
  return { set, clear: clear.filter((id) => !set.some((row) => row.field_id === id)) };
}

/** Whether `text` is a calendar date written YYYY-MM-DD. */
function isDate(text: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(text)) return false;
  const date = new Date(`${text}T00:00:00Z`);
  return !Number.isNaN(date.getTime()) && date.toISOString().startsWith(text);
}

/** Whether `text` is an http(s) URL. */
function isWebUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return url.protocol === "http:" || url.protocol === "https:";
  } catch {
    return false;
  }
}

/**
 * PATCH /users/{user_id} and /users/{email}: changes another account's name,
 * role and custom profile data in one transaction, after every check.
 */
export async function doUpdateUser(
  deps: DatabaseAndBus,
  actor: AuthedUser,
  ref: number | string,
  change: UserChange,
): Promise<void> {
  const { db, bus } = deps;
  if (change.role !== undefined && !ROLES.includes(change.role))
    throw new JsonableError("Invalid role");
  const name =
    change.fullName === undefined || change.fullName.trim() === ""
      ? undefined
      : checkFullName(change.fullName);
  const profile =
    change.profileData === undefined
      ? undefined
      : await checkProfileData(deps, actor, change.profileData);
  const target = await db.transaction(async (tx) => {
    const row = await targetOf(tx, actor, ref);
    const { role } = change;
    if (role !== undefined && role !== row.role) {
      if ((isOwner(role) || isOwner(row.role)) && !isOwner(actor.role))
        throw new OrganizationOwnerRequiredError();
      if (isOwner(row.role) && (await isLastOwner(tx, row.realm_id, row.id)))
        throw new JsonableError(
          "The owner permission cannot be removed from the only organization owner.",
        );
      await changeRole(tx, row.realm_id, row.id, row.role, role);
    }
    if (name !== undefined && name !== row.full_name)
      await renamePerson(tx, row.realm_id, row.id, name);
    if (profile !== undefined) await changeProfileData(tx, row.realm_id, row.id, profile);
    await bus.announce(tx, { user: row.id });
    return row.id;
  });
  bus.apply({ user: target });
}

/**
 * Gives user `userId` role `role` inside `tx`: moves them from their old
 * role's system group to the new one's, and tells the realm (`realm_user`
 * `update` with `role`, `user_group` `remove_members` and `add_members`).
 */
async function changeRole(
  tx: Tx,
  realmId: number,
  userId: number,
  from: number,
  to: number,
): Promise<void> {
  await setRole(tx, userId, to);
  const audience = await activeUserIds(tx, realmId);
  await sendEvent(tx, audience, {
    type: "realm_user",
    op: "update",
    person: { user_id: userId, role: to },
  });
  const left = await groupByName(tx, realmId, GROUP_OF_ROLE[from] ?? "role:everyone");
  const joined = await groupByName(tx, realmId, GROUP_OF_ROLE[to] ?? "role:everyone");
  if (left.id === joined.id) return;
  await deleteGroupMembers(tx, left.id, [userId]);
  await insertGroupMembers(tx, joined.id, [userId]);
  await sendEvent(tx, audience, {
    type: "user_group",
    op: "remove_members",
    group_id: left.id,
    user_ids: [userId],
  });
  await sendEvent(tx, audience, {
    type: "user_group",
    op: "add_members",
    group_id: joined.id,
    user_ids: [userId],
  });
}

/** Stores and clears a person's profile values inside `tx`, telling the realm of each field that changed. */
async function changeProfileData(
  tx: Tx,
  realmId: number,
  userId: number,
  profile: { set: ProfileValueRow[]; clear: number[] },
): Promise<void> {
  await upsertProfileValues(tx, userId, profile.set);
  const cleared = await deleteProfileValues(tx, userId, profile.clear);
  const audience = await activeUserIds(tx, realmId);
  const fields = [
    ...profile.set.map((row) => ({
      id: row.field_id,
      value: row.value,
      ...(row.rendered_value === null ? {} : { rendered_value: row.rendered_value }),
    })),
    ...cleared.map((id) => ({ id, value: null })),
  ];
  for (const field of fields)
    await sendEvent(tx, audience, {
      type: "realm_user",
      op: "update",
      person: { user_id: userId, custom_profile_field: field },
    });
}

/**
 * DELETE /users/{user_id}: an administrator deactivates a person (an owner
 * only by an owner; never the only owner). With
 * `deactivation_notification_comment`, the person is told by e-mail.
 */
export async function doDeactivateUser(
  deps: DatabaseAndBus,
  actor: AuthedUser,
  userId: number,
  comment: string | undefined,
  realm: { name: string; url: string },
): Promise<void> {
  const target = await targetOf(deps.db, actor, userId);
  if (target.is_bot || !target.is_active) throw new JsonableError("No such user");
  if (isOwner(target.role) && !isOwner(actor.role)) throw new OrganizationOwnerRequiredError();
  if (isOwner(target.role) && (await isLastOwner(deps.db, target.realm_id, target.id)))
    throw new JsonableError("Cannot deactivate the only organization owner");
  await doSetUserActive(deps, target.id, false, async (tx) => {
    if (comment === undefined) return;
    const note = comment.trim();
    await queueEmail(tx, {
      realm_id: target.realm_id,
      to_address: target.delivery_email,
      subject: `Notification of account deactivation on ${realm.name}`,
      body_text: [
        `Your Zulip account on ${realm.url} has been deactivated, and you will no longer be able to log in.`,
        ...(note === ""
          ? []
          : ["", "The administrators provided the following comment:", "", note]),
      ].join("\n"),
    });
  });
}

/** DELETE /users/me: a person deactivates their own account (never the realm's last account or only owner). */
export async function doDeactivateOwnUser(deps: DatabaseAndBus, actor: AuthedUser): Promise<void> {
  const lastUser = (await activeAccountCount(deps.db, actor.realm_id)) === 1;
  const lastOwner = isOwner(actor.role) && (await isLastOwner(deps.db, actor.realm_id, actor.id));
  if (lastUser || lastOwner)
    throw new JsonableError(
      lastOwner
        ? "Cannot deactivate the only organization owner."
        : "Cannot deactivate the only user.",
      ErrorCode.CANNOT_DEACTIVATE_LAST_USER,
      400,
      { entity: lastOwner ? "organization owner" : "user", is_last_owner: lastOwner },
    );
  await doSetUserActive(deps, actor.id, false);
}

/** POST /users/{user_id}/reactivate: an administrator reactivates a person or bot of the realm (an active one stays as it is). */
export async function doReactivateUser(
  deps: DatabaseAndBus,
  actor: AuthedUser,
  userId: number,
): Promise<void> {
  const target = await targetOf(deps.db, actor, userId);
  if (isOwner(target.role) && !isOwner(actor.role)) throw new OrganizationOwnerRequiredError();
  if (target.is_active) return;
  await doSetUserActive(deps, target.id, true);
}
