import { activeUserIds } from "../db/queries/users";
import {
  insertProfileField,
  profileFieldNameTaken,
  profileFieldsOf,
  summaryFieldCount,
} from "../db/queries/profile-fields";
import { nextOrder } from "../db/queries/realms";
import { isUniqueViolation } from "../db/unavailable";
import type { Tx } from "../db/kysely";
import type { Database } from "../db/database";
import { JsonableError } from "@repo/envelope";
import { z } from "zod";
import { sendEvent } from "../realtime/queue";
import { codePoints } from "../lib/text";

/** Zulip's custom profile field types. */
export const ProfileFieldType = {
  SHORT_TEXT: 1,
  LONG_TEXT: 2,
  SELECT: 3,
  DATE: 4,
  URL: 5,
  USER: 6,
  EXTERNAL_ACCOUNT: 7,
  PRONOUNS: 8,
} as const;

/** The external accounts Zulip knows, which need no name or URL pattern. */
const DEFAULT_EXTERNAL_ACCOUNTS: Record<string, { name: string; hint: string }> = {
  github: { name: "GitHub", hint: "Enter your GitHub username" },
  twitter: { name: "Twitter", hint: "Enter your Twitter username" },
};

const selectData = z.record(
  z.string(),
  z.object({ text: z.string().min(1), order: z.string() }).strict(),
);
const externalData = z.union([
  z.object({ subtype: z.enum(Object.keys(DEFAULT_EXTERNAL_ACCOUNTS)) }).strict(),
  z
    .object({
      subtype: z.literal("custom"),
      url_pattern: z.string().refine((p) => p.includes("%(username)s")),
    })
    .strict(),
]);

/** At most this many fields show in the profile summary. */
const MAX_SUMMARY_FIELDS = 2;

/** What POST /realm/profile_fields asks for, parsed. */
export interface NewProfileField {
  name: string;
  hint: string;
  fieldType: number;
  fieldData: Record<string, unknown>;
  displayInProfileSummary: boolean;
  required: boolean;
  editableByUser: boolean;
}

/**
 * Creates a custom profile field at the end of the realm's order, with
 * Zulip's checks and messages (type, choices, external-account kinds, label
 * and hint limits, the profile-summary limit, unique labels). Returns its id.
 */
export async function doCreateProfileField(
  db: Database,
  realmId: number,
  field: NewProfileField,
): Promise<number> {
  if (!(Object.values(ProfileFieldType) as number[]).includes(field.fieldType))
    throw new JsonableError("Invalid field type.");
  let { name, hint } = field;
  if (field.fieldType === ProfileFieldType.SELECT) {
    if (Object.keys(field.fieldData).length < 1)
      throw new JsonableError("Field must have at least one choice.");
    if (!selectData.safeParse(field.fieldData).success)
      throw new JsonableError("Invalid field_data for a list of options.");
  }
  if (field.fieldType === ProfileFieldType.EXTERNAL_ACCOUNT) {
    const parsed = externalData.safeParse(field.fieldData);
    if (!parsed.success) throw new JsonableError("Invalid external account type.");
    const known = DEFAULT_EXTERNAL_ACCOUNTS[parsed.data.subtype];
    if (known !== undefined) ({ name, hint } = known);
  }
  if (name.trim() === "") throw new JsonableError("Label cannot be blank.");
  if (codePoints(hint) > 80) throw new JsonableError("hint is too long (limit: 80 characters)");
  if (codePoints(name) > 40) throw new JsonableError("name is too long (limit: 40 characters)");
  if (
    field.displayInProfileSummary &&
    (field.fieldType === ProfileFieldType.LONG_TEXT || field.fieldType === ProfileFieldType.USER)
  )
    throw new JsonableError("Field type not supported for display in profile summary.");
  const duplicate = new JsonableError("A field with that label already exists.");
  try {
    return await db.transaction(async (tx) => {
      if (field.displayInProfileSummary) {
        const shown = await summaryFieldCount(tx, realmId);
        if (shown >= MAX_SUMMARY_FIELDS) {
          throw new JsonableError(
            `Only ${MAX_SUMMARY_FIELDS} custom profile fields can be displayed in the profile summary.`,
          );
        }
      }
      if (await profileFieldNameTaken(tx, realmId, name)) throw duplicate;
      const id = await insertProfileField(tx, {
        realm_id: realmId,
        name,
        hint,
        field_type: field.fieldType,
        field_data:
          Object.keys(field.fieldData).length === 0 ? "" : JSON.stringify(field.fieldData),
        order: await nextOrder(tx, "custom_profile_fields", realmId),
        display_in_profile_summary: field.displayInProfileSummary,
        required: field.required,
        editable_by_user: field.editableByUser,
      });
      await sendProfileFieldsEvent(tx, realmId);
      return id;
    });
  } catch (error) {
    throw isUniqueViolation(error) ? duplicate : error;
  }
}

/** Tells the realm its profile fields changed (`custom_profile_fields`, the whole new list), inside `tx`. */
export async function sendProfileFieldsEvent(tx: Tx, realmId: number) {
  await sendEvent(tx, await activeUserIds(tx, realmId), {
    type: "custom_profile_fields",
    fields: await listProfileFields(tx, realmId),
  });
}

/** The realm's custom profile fields in their order, as GET /realm/profile_fields and the events describe them. */
export async function listProfileFields(tx: Tx, realmId: number) {
  const rows = await profileFieldsOf(tx, realmId);
  return rows.map((f) => ({
    id: f.id,
    name: f.name,
    type: f.field_type,
    hint: f.hint,
    field_data: f.field_data,
    order: f.order,
    // Zulip sends this key only when it is true.
    ...(f.display_in_profile_summary ? { display_in_profile_summary: true } : {}),
    required: f.required,
    editable_by_user: f.editable_by_user,
  }));
}
