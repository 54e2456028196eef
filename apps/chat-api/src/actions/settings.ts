import {
  activeAdministratorIds,
  activeHumanSettings,
  activeUserIds,
  userById,
} from "../db/queries/users";
import { lockRealm, realmById, updateRealm } from "../db/queries/realms";
import { updateUserSettings } from "../db/queries/user-settings";
import { JsonableError } from "@repo/envelope";
import type { Prisma } from "../gen/prisma/client";
import { sendEvent } from "../realtime/queue";
import type { AuthedUser } from "../caches/auth";
import {
  SETTING_RULES,
  type SettingValue,
  realmSettingsDefaults,
  userSettings,
  LANGUAGE_CODE,
} from "../lib/user-settings";
import { checkFullName } from "./accounts";
import { renamePerson } from "./user-admin";
import type { DatabaseAndBus } from "../caches/cache-bus";
import type { Database } from "../db/database";

/** Settings kept in columns of `users` rather than in its `settings` object. */
const COLUMNS = new Set(["timezone", "enable_drafts_synchronization"]);

/** Whether `zone` is a time zone this server's ICU knows ("" clears it). */
function knownTimeZone(zone: string): boolean {
  if (zone === "") return true;
  try {
    new Intl.DateTimeFormat("en", { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/** `value` checked against the setting's rule: the value to store, or Zulip's error. */
function checkSetting(name: string, value: SettingValue): SettingValue {
  const rule = SETTING_RULES[name];
  if (rule === undefined) throw new JsonableError(`Unknown setting: ${name}`);
  if (name === "timezone" && (typeof value !== "string" || !knownTimeZone(value)))
    throw new JsonableError(`Invalid timezone '${String(value)}'`);
  if (name === "default_language" && !LANGUAGE_CODE.test(String(value)))
    throw new JsonableError(`Invalid default language '${String(value)}'`);
  const invalid = () => new JsonableError(`Invalid ${name}`);
  switch (rule.kind) {
    case "bool":
      if (typeof value !== "boolean") throw invalid();
      return value;
    case "int":
      if (typeof value !== "number" || !Number.isInteger(value)) throw invalid();
      if (rule.values !== undefined && !rule.values.includes(value)) throw invalid();
      if (
        (rule.min !== undefined && value < rule.min) ||
        (rule.max !== undefined && value > rule.max)
      )
        throw invalid();
      return value;
    case "string":
      if (typeof value !== "string") throw invalid();
      if (rule.values !== undefined && !rule.values.includes(value)) throw invalid();
      return value;
  }
}

/**
 * PATCH /settings: changes the caller's settings and name, all checked before
 * anything is stored, in one transaction; each setting that changed is sent
 * to the caller's clients as `user_settings` `update`, a new name to the
 * realm as `realm_user` `update`.
 */
export async function doUpdateSettings(
  { db, bus }: DatabaseAndBus,
  user: Pick<AuthedUser, "id" | "realm_id">,
  changes: Record<string, SettingValue>,
  fullName: string | undefined,
): Promise<void> {
  const checked = Object.fromEntries(
    Object.entries(changes).map(([name, value]) => [name, checkSetting(name, value)]),
  );
  const name = fullName === undefined ? undefined : checkFullName(fullName);
  const renamed = await db.transaction(async (tx) => {
    const row = await userById(tx, user.id);
    const before = userSettings(row) as Record<string, SettingValue | readonly unknown[]>;
    const changed = Object.entries(checked).filter(([key, value]) => before[key] !== value);
    if (changed.length > 0) {
      const stored = { ...(row.settings as Prisma.JsonObject) };
      const columns: Record<string, SettingValue> = {};
      for (const [key, value] of changed) {
        if (COLUMNS.has(key)) columns[key] = value;
        else stored[key] = value;
      }
      await updateUserSettings(tx, user.id, columns, stored);
      // Administrators learn who consents to the export of their private data (feature level 295).
      const consent = changed.find(([key]) => key === "allow_private_data_export");
      if (consent !== undefined)
        await sendEvent(tx, await activeAdministratorIds(tx, user.realm_id), {
          type: "realm_export_consent",
          user_id: user.id,
          consented: consent[1],
        });
      for (const [property, value] of changed)
        await sendEvent(tx, [user.id], {
          type: "user_settings",
          op: "update",
          property,
          value,
          ...(property === "default_language" ? { language_name: String(value) } : {}),
        });
    }
    if (name === undefined || name === row.full_name) return false;
    await renamePerson(tx, user.realm_id, user.id, name);
    // The cached identity of every replica carries the name.
    await bus.announce(tx, { user: user.id });
    return true;
  });
  if (renamed) bus.apply({ user: user.id });
}

/**
 * PATCH /realm/user_settings_defaults (administrators): changes the realm's
 * defaults of personal settings for new users, each checked as PATCH
 * /settings checks it, in one transaction; a `realm_user_settings_defaults`
 * `update` to the realm per setting that changed. Existing users keep theirs.
 */
export async function doUpdateRealmUserDefaults(
  { db, bus }: DatabaseAndBus,
  realmId: number,
  changes: Record<string, SettingValue>,
): Promise<void> {
  const checked = Object.entries(changes).map(
    ([name, value]) => [name, checkSetting(name, value)] as const,
  );
  await db.transaction(async (tx) => {
    await lockRealm(tx, realmId);
    const realm = await realmById(tx, realmId);
    const current = realmSettingsDefaults(realm.user_settings_defaults) as Record<string, unknown>;
    const changed = checked.filter(([name, value]) => current[name] !== value);
    if (changed.length === 0) return;
    const stored = { ...(realm.user_settings_defaults as Prisma.JsonObject) };
    for (const [name, value] of changed) stored[name] = value;
    await updateRealm(tx, realmId, { user_settings_defaults: stored });
    const audience = await activeUserIds(tx, realmId);
    for (const [property, value] of changed)
      await sendEvent(tx, audience, {
        type: "realm_user_settings_defaults",
        op: "update",
        property,
        value,
      });
    await bus.announce(tx, { realm: realmId });
  });
  bus.apply({ realm: realmId });
}

/**
 * GET /export/realm/consents (administrators; feature level 295): whether each
 * active human of the realm consents to administrators exporting their
 * private data (their `allow_private_data_export` setting).
 */
export async function listExportConsents(db: Database, realmId: number) {
  return (await activeHumanSettings(db, realmId)).map((row) => ({
    user_id: row.id,
    consented: (userSettings(row) as Record<string, unknown>).allow_private_data_export === true,
  }));
}
