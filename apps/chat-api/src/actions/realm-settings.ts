import { activeUserIds } from "../db/queries/users";
import { liveChannelInRealm } from "../db/queries/channels";
import { realmById, updateRealm } from "../db/queries/realms";
import { JsonableError, OrganizationOwnerRequiredError } from "@repo/envelope";
import type { Prisma, Realm } from "../gen/prisma/client";
import { sendEvent } from "../realtime/queue";
import type { AuthedUser } from "../caches/auth";
import type { DatabaseAndBus } from "../caches/cache-bus";
import { renderPlain } from "../lib/render";
import { isOwner } from "../lib/roles";
import { codePoints } from "../lib/text";
import { LANGUAGE_CODE } from "../lib/user-settings";
import { type GroupSettingUpdate, changeGroupSetting, readGroupSetting } from "./group-settings";
import { type SystemGroupName, checkRealmName, systemGroupIds } from "./realm-creation";

/**
 * PATCH /realm (administrators; some settings owners only, as in Zulip):
 * the organization's settings, all checked before anything is written, then
 * written in one transaction with Zulip's `realm` events to its people; every
 * replica drops its cached realm row, so register's `realm_*` values and the
 * checks that read the settings (edit, delete and move limits, retention,
 * who may invite, create channels, groups and bots) follow at once.
 */

/** A realm description's longest length (Zulip's `MAX_REALM_DESCRIPTION_LENGTH`). */
export const MAX_REALM_DESCRIPTION_LENGTH = 1000;

/**
 * The realm's permission settings PATCH /realm changes: the column, the system
 * group an unset column means (register's fallbacks), whether only an owner
 * may change it, and the system groups it may never be (Zulip's
 * `allow_internet_group` and `allow_everyone_group`).
 */
const REALM_GROUP_SETTINGS = {
  can_access_all_users_group: {
    column: "can_access_all_users_group_id",
    unset: "role:everyone",
    owner: false,
    refused: ["role:internet", "role:nobody", "role:owners", "role:administrators"],
  },
  can_add_subscribers_group: {
    column: "can_add_subscribers_group_id",
    unset: "role:members",
    owner: false,
    refused: ["role:internet", "role:everyone"],
  },
  can_create_bots_group: {
    column: "can_create_bots_group_id",
    unset: "role:members",
    owner: false,
    refused: ["role:internet", "role:everyone"],
  },
  can_create_groups: {
    column: "can_create_groups_id",
    unset: "role:members",
    owner: true,
    refused: ["role:internet", "role:everyone"],
  },
  can_create_private_channel_group: {
    column: "can_create_private_channel_group_id",
    unset: "role:members",
    owner: false,
    refused: ["role:internet", "role:everyone"],
  },
  can_create_public_channel_group: {
    column: "can_create_public_channel_group_id",
    unset: "role:members",
    owner: false,
    refused: ["role:internet", "role:everyone"],
  },
  can_create_web_public_channel_group: {
    column: "can_create_web_public_channel_group_id",
    unset: "role:owners",
    owner: false,
    refused: ["role:internet", "role:everyone"],
  },
  can_invite_users_group: {
    column: "can_invite_users_group_id",
    unset: "role:members",
    owner: true,
    refused: ["role:internet", "role:everyone"],
  },
  can_manage_all_groups: {
    column: "can_manage_all_groups_id",
    unset: "role:administrators",
    owner: true,
    refused: ["role:internet", "role:everyone"],
  },
} as const satisfies Record<
  string,
  { column: keyof Realm; unset: SystemGroupName; owner: boolean; refused: SystemGroupName[] }
>;

/**
 * A permission setting's group: the realm's column, or the system group that
 * stands for it while the column is unset (what register answers too).
 */
export function realmGroupSetting(
  realm: Realm,
  setting: RealmGroupSetting,
  system: Record<SystemGroupName, number>,
): number {
  const rule = REALM_GROUP_SETTINGS[setting];
  return realm[rule.column] ?? system[rule.unset];
}

/** The permission settings' names. */
export type RealmGroupSetting = keyof typeof REALM_GROUP_SETTINGS;
export const REALM_GROUP_SETTING_NAMES = Object.keys(REALM_GROUP_SETTINGS) as RealmGroupSetting[];

/** The time limits, in seconds (null: none), and the retention, in days (null: forever). */
const LIMIT_SETTINGS = [
  "message_content_edit_limit_seconds",
  "message_content_delete_limit_seconds",
  "move_messages_within_stream_limit_seconds",
  "move_messages_between_streams_limit_seconds",
] as const;

/** The settings that are on or off. */
const BOOLEAN_SETTINGS = [
  "allow_message_editing",
  "enable_spectator_access",
  "invite_required",
  "emails_restricted_to_domains",
  "disallow_disposable_email_addresses",
] as const;

/** What PATCH /realm may change; each optional, as sent (limits and retention unparsed). */
export interface RealmSettingsChange {
  name?: string | undefined;
  description?: string | undefined;
  default_language?: string | undefined;
  allow_message_editing?: boolean | undefined;
  enable_spectator_access?: boolean | undefined;
  invite_required?: boolean | undefined;
  emails_restricted_to_domains?: boolean | undefined;
  disallow_disposable_email_addresses?: boolean | undefined;
  message_retention_days?: string | undefined;
  message_content_edit_limit_seconds?: string | undefined;
  message_content_delete_limit_seconds?: string | undefined;
  move_messages_within_stream_limit_seconds?: string | undefined;
  move_messages_between_streams_limit_seconds?: string | undefined;
  new_stream_announcements_stream_id?: number | undefined;
  groups: Partial<Record<RealmGroupSetting, GroupSettingUpdate>>;
}

/** A limit or retention as Zulip takes it: a positive integer, or `unlimited` (null). */
function parseLimit(name: string, raw: string): number | null {
  const value = raw.trim().replace(/^"(.*)"$/, "$1");
  if (value === "unlimited") return null;
  if (/^[1-9]\d{0,8}$/.test(value)) return Number(value);
  throw new JsonableError(`Bad value for '${name}': ${raw}`);
}

/** A language code (Zulip offers its translations' codes), within the column's 20 characters. */
function checkLanguage(code: string): string {
  if (code.length > 20 || !LANGUAGE_CODE.test(code))
    throw new JsonableError(`Invalid language '${code}'`);
  return code;
}

/** The scalar settings: each the name of its own column. */
type ScalarSetting =
  | "name"
  | "description"
  | "default_language"
  | (typeof BOOLEAN_SETTINGS)[number]
  | (typeof LIMIT_SETTINGS)[number]
  | "message_retention_days";

/** A scalar setting's new value, checked; `column` is where it is stored. */
interface ScalarChange {
  property: ScalarSetting & keyof Realm;
  value: string | boolean | number | null;
  column: Prisma.RealmUncheckedUpdateInput;
  /** The value the wire (register and events) shows. */
  wire: string | boolean | number | null;
}

/** Checks the scalar settings of `change` against Zulip's rules; nothing is read or written. */
function checkScalars(actor: AuthedUser, change: RealmSettingsChange): ScalarChange[] {
  const scalars: ScalarChange[] = [];
  if (change.name !== undefined) {
    const name = checkRealmName(change.name);
    scalars.push({ property: "name", value: name, column: { name }, wire: name });
  }
  if (change.description !== undefined) {
    const description = change.description;
    if (codePoints(description) > MAX_REALM_DESCRIPTION_LENGTH)
      throw new JsonableError(
        `description is too long (limit: ${MAX_REALM_DESCRIPTION_LENGTH} characters)`,
      );
    scalars.push({
      property: "description",
      value: description,
      column: { description },
      wire: "",
    });
  }
  if (change.default_language !== undefined) {
    const language = checkLanguage(change.default_language);
    scalars.push({
      property: "default_language",
      value: language,
      column: { default_language: language },
      wire: language,
    });
  }
  for (const property of BOOLEAN_SETTINGS) {
    const value = change[property];
    if (value !== undefined)
      scalars.push({ property, value, column: { [property]: value }, wire: value });
  }
  for (const property of LIMIT_SETTINGS) {
    const raw = change[property];
    if (raw === undefined) continue;
    const value = parseLimit(property, raw);
    scalars.push({ property, value, column: { [property]: value }, wire: value });
  }
  if (change.message_retention_days !== undefined) {
    if (!isOwner(actor.role)) throw new OrganizationOwnerRequiredError();
    const days = parseLimit("message_retention_days", change.message_retention_days);
    scalars.push({
      property: "message_retention_days",
      value: days,
      column: { message_retention_days: days },
      wire: days ?? -1,
    });
  }
  return scalars;
}

/** Zulip's event of a changed scalar: `update`, but `update_dict` for its message-editing ones. */
function scalarEvent(property: string, value: string | boolean | number | null) {
  return property === "allow_message_editing" || property === "message_content_edit_limit_seconds"
    ? { type: "realm", op: "update_dict", property: "default", data: { [property]: value } }
    : { type: "realm", op: "update", property, value };
}

/**
 * PATCH /realm's settings but the moderation channel: answers Zulip's `data`,
 * each changed setting with its new value (a text's as `"updated"`).
 */
export async function doUpdateRealmSettings(
  { db, bus }: DatabaseAndBus,
  actor: AuthedUser,
  change: RealmSettingsChange,
): Promise<Record<string, unknown>> {
  const scalars = checkScalars(actor, change);
  const groupChanges = Object.entries(change.groups) as [RealmGroupSetting, GroupSettingUpdate][];
  for (const [setting] of groupChanges)
    if (REALM_GROUP_SETTINGS[setting].owner && !isOwner(actor.role))
      throw new OrganizationOwnerRequiredError();
  // The description is rendered before the transaction: no transaction waits on a render.
  const description = scalars.find((s) => s.property === "description");
  if (description !== undefined) description.wire = await renderPlain(String(description.value));
  const data = await db.transaction(async (tx) => {
    const realm = await realmById(tx, actor.realm_id);
    const changed = scalars.filter((s) => realm[s.property] !== s.value);
    const announcementsId = change.new_stream_announcements_stream_id;
    const announcements =
      announcementsId !== undefined &&
      announcementsId !== (realm.new_stream_announcements_stream_id ?? -1);
    if (announcements && announcementsId >= 0) {
      if ((await liveChannelInRealm(tx, actor.realm_id, announcementsId)) === null)
        throw new JsonableError("Invalid channel ID");
    }
    const system = await systemGroupIds(tx, actor.realm_id);
    const groupColumns: Prisma.RealmUncheckedUpdateInput = {};
    const groupEvents: Record<string, unknown> = {};
    for (const [setting, update] of groupChanges) {
      const rule = REALM_GROUP_SETTINGS[setting];
      for (const name of rule.refused)
        if (update.new === system[name])
          throw new JsonableError(`'${setting}' setting cannot be set to '${name}' group.`);
      const current = realmGroupSetting(realm, setting, system);
      const next = await changeGroupSetting(tx, actor.realm_id, current, update);
      if (next === undefined) continue;
      Object.assign(groupColumns, { [rule.column]: next });
      groupEvents[setting] = await readGroupSetting(tx, next);
    }
    const columns = Object.assign(
      {},
      ...changed.map((s) => s.column),
      groupColumns,
      announcements
        ? { new_stream_announcements_stream_id: announcementsId >= 0 ? announcementsId : null }
        : {},
    ) as Prisma.RealmUncheckedUpdateInput;
    if (Object.keys(columns).length === 0) return {};
    await updateRealm(tx, actor.realm_id, columns);
    const people = await activeUserIds(tx, actor.realm_id);
    for (const scalar of changed)
      await sendEvent(tx, people, scalarEvent(scalar.property, scalar.wire));
    if (announcements)
      await sendEvent(tx, people, {
        type: "realm",
        op: "update",
        property: "new_stream_announcements_stream_id",
        value: announcementsId,
      });
    if (Object.keys(groupEvents).length > 0)
      await sendEvent(tx, people, {
        type: "realm",
        op: "update_dict",
        property: "default",
        data: groupEvents,
      });
    await bus.announce(tx, { realm: actor.realm_id });
    return {
      ...Object.fromEntries(
        changed.map((s) => [s.property, typeof s.value === "string" ? "updated" : s.wire]),
      ),
      ...(announcements ? { new_stream_announcements_stream_id: announcementsId } : {}),
      ...groupEvents,
    };
  });
  if (Object.keys(data).length > 0) bus.apply({ realm: actor.realm_id });
  return data;
}
