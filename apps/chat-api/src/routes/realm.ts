import { doAddPlayground, doRemovePlayground } from "../actions/realm-playgrounds";
import { doUpdateRealmUserDefaults, listExportConsents } from "../actions/settings";
import { ExportType, doStartRealmExport, listRealmExports } from "../actions/realm-export";
import { isOwner } from "../lib/roles";
import { REALM_GROUP_SETTING_NAMES, doUpdateRealmSettings } from "../actions/realm-settings";
import { realmUrl } from "../lib/realm-url";
import { OrganizationOwnerRequiredError } from "@repo/envelope";
import { REALM_DEFAULT_SETTINGS, SETTING_RULES, type SettingValue } from "../lib/user-settings";
import { z } from "zod";
import { doReorderLinkifiers, doReorderProfileFields } from "../actions/realm-order";
import { doSetModerationChannel } from "../actions/message-reports";
import {
  doAddCustomEmoji,
  doDeactivateCustomEmoji,
  listCustomEmoji,
} from "../actions/custom-emoji";
import {
  doAddLinkifier,
  doRemoveLinkifier,
  doUpdateLinkifier,
  listLegacyFilters,
  listLinkifiers,
} from "../actions/realm-linkifiers";
import { doCreateProfileField, listProfileFields } from "../actions/custom-profile-fields";
import { bool, groupSettingUpdateParam, int, json, settingParams, str } from "../http/params";
import { userEndpoint } from "../http/typed-endpoint";
import type { Services } from "../http/context";

const ids = z.array(z.int32());

/** PATCH /realm/user_settings_defaults' parameters: the settings a realm sets defaults of, each optional. */
const REALM_DEFAULT_PARAMS = settingParams(
  Object.fromEntries(
    REALM_DEFAULT_SETTINGS.flatMap((name) => {
      const rule = SETTING_RULES[name];
      return rule === undefined ? [] : [[name, rule]];
    }),
  ),
);

/** PATCH /realm's permission settings: each a group-setting change (`{new, old}`), optional. */
const REALM_GROUP_PARAMS = Object.fromEntries(
  REALM_GROUP_SETTING_NAMES.map((name) => [name, groupSettingUpdateParam().optional()]),
) as Record<
  (typeof REALM_GROUP_SETTING_NAMES)[number],
  ReturnType<ReturnType<typeof groupSettingUpdateParam>["optional"]>
>;

/** Organization settings, custom emoji, linkifiers and custom profile fields of the realm. */
export function realmRoutes({ db, bus, config, uploads, logger }: Services) {
  return {
    updateRealm: userEndpoint(
      {
        operationId: "update-realm",
        summary: "Update organization settings",
        tag: "server_and_organizations",
        access: { role: "administrator" },
        params: {
          name: str({ maxLength: 1000 }).optional().describe("The organization's name"),
          description: str({ maxLength: 10_000 })
            .optional()
            .describe("The organization's description (Markdown)"),
          default_language: str({ maxLength: 100 }).optional(),
          allow_message_editing: bool().optional(),
          enable_spectator_access: bool().optional(),
          invite_required: bool().optional().describe("Whether joining needs an invitation"),
          emails_restricted_to_domains: bool()
            .optional()
            .describe("Whether only addresses of the organization's domains may sign up"),
          disallow_disposable_email_addresses: bool()
            .optional()
            .describe("Whether addresses of throwaway mail providers are refused at sign-up"),
          message_retention_days: str({ maxLength: 100 })
            .optional()
            .describe("Days, or `unlimited` (owners only)"),
          message_content_edit_limit_seconds: str({ maxLength: 100 })
            .optional()
            .describe("Seconds, or `unlimited`"),
          message_content_delete_limit_seconds: str({ maxLength: 100 }).optional(),
          move_messages_within_stream_limit_seconds: str({ maxLength: 100 }).optional(),
          move_messages_between_streams_limit_seconds: str({ maxLength: 100 }).optional(),
          new_stream_announcements_stream_id: int({ min: -1 }).optional(),
          moderation_request_channel_id: int({ min: -1 })
            .optional()
            .describe("The private channel reports of messages go to; -1 turns reporting off"),
          ...REALM_GROUP_PARAMS,
        },
      },
      async ({ user, params }) => {
        const { moderation_request_channel_id: channelId, ...rest } = params;
        const groups = Object.fromEntries(
          REALM_GROUP_SETTING_NAMES.flatMap((name) => {
            const change = rest[name];
            return change === undefined ? [] : [[name, change]];
          }),
        );
        const scalars = Object.fromEntries(
          Object.entries(rest).filter(
            ([name]) => !(REALM_GROUP_SETTING_NAMES as readonly string[]).includes(name),
          ),
        ) as Omit<typeof rest, (typeof REALM_GROUP_SETTING_NAMES)[number]>;
        const data = await doUpdateRealmSettings({ db, bus }, user, { ...scalars, groups });
        if (channelId === undefined) return data;
        await doSetModerationChannel(db, bus, user, channelId);
        return { ...data, moderation_request_channel_id: channelId };
      },
    ),
    getLinkifiers: userEndpoint(
      {
        operationId: "get-linkifiers",
        summary: "Get linkifiers",
        tag: "server_and_organizations",
        params: {},
      },
      async ({ realm }) => ({ linkifiers: await listLinkifiers(db, realm.id) }),
    ),
    getLegacyFilters: userEndpoint(
      {
        operationId: "get-linkifiers-legacy",
        summary: "Get linkifiers (legacy form)",
        tag: "server_and_organizations",
        deprecated: true,
        params: {},
      },
      async ({ realm }) => ({ filters: await listLegacyFilters(db, realm.id) }),
    ),
    reorderLinkifiers: userEndpoint(
      {
        operationId: "reorder-linkifiers",
        summary: "Reorder linkifiers",
        tag: "server_and_organizations",
        access: { role: "administrator" },
        params: {
          ordered_linkifier_ids: json(ids).describe(
            "IDs of all the organization's linkifiers, in the new order",
          ),
        },
      },
      async ({ realm, params }) => {
        await doReorderLinkifiers(db, realm.id, params.ordered_linkifier_ids);
        return {};
      },
    ),
    addLinkifier: userEndpoint(
      {
        operationId: "add-linkifier",
        summary: "Add a linkifier",
        tag: "server_and_organizations",
        access: { role: "administrator" },
        params: {
          pattern: str({ notBlank: true }).describe("Regular expression (Python syntax)"),
          url_template: str({ notBlank: true }).describe("RFC 6570 URL template"),
        },
      },
      async ({ realm, params }) => ({
        id: await doAddLinkifier(db, realm.id, params.pattern, params.url_template),
      }),
    ),
    updateLinkifier: userEndpoint(
      {
        pathParams: ["filter_id"],
        operationId: "update-linkifier",
        summary: "Update a linkifier",
        tag: "server_and_organizations",
        access: { role: "administrator" },
        params: {
          pattern: str({ notBlank: true }).describe("Regular expression (Python syntax)"),
          url_template: str({ notBlank: true }).describe("RFC 6570 URL template"),
        },
      },
      async ({ realm, path, params }) => {
        await doUpdateLinkifier(db, realm.id, path.filter_id, params.pattern, params.url_template);
        return {};
      },
    ),
    updateRealmUserSettingsDefaults: userEndpoint(
      {
        operationId: "update-realm-user-settings-defaults",
        summary: "Update realm-level defaults of user settings",
        tag: "server_and_organizations",
        access: { role: "administrator" },
        params: REALM_DEFAULT_PARAMS,
      },
      async ({ realm, params }) => {
        const changes = Object.fromEntries(
          Object.entries(params).filter(
            (entry): entry is [string, SettingValue] => entry[1] !== undefined,
          ),
        );
        await doUpdateRealmUserDefaults({ db, bus }, realm.id, changes);
        return {};
      },
    ),
    exportRealm: userEndpoint(
      {
        operationId: "export-realm",
        summary: "Create a data export",
        tag: "server_and_organizations",
        access: { role: "administrator" },
        params: {
          export_type: int({ min: 1, max: 2 })
            .default(1)
            .describe("1: public data; 2: standard (private data of those who consent; owners)"),
        },
      },
      async ({ user, realm, params }) => {
        if (params.export_type === ExportType.STANDARD && !isOwner(user.role))
          throw new OrganizationOwnerRequiredError();
        const started = await doStartRealmExport(
          { db, uploads, logger },
          user,
          params.export_type,
          realmUrl(config, realm),
        );
        return { id: started.id };
      },
    ),
    getRealmExports: userEndpoint(
      {
        operationId: "get-realm-exports",
        summary: "Get all data exports",
        tag: "server_and_organizations",
        access: { role: "administrator" },
        params: {},
      },
      async ({ realm }) => ({
        exports: await listRealmExports(db, realm.id, realmUrl(config, realm)),
      }),
    ),
    getExportConsents: userEndpoint(
      {
        operationId: "get-realm-export-consents",
        summary: "Get data export consent state",
        tag: "server_and_organizations",
        access: { role: "administrator" },
        params: {},
      },
      async ({ realm }) => ({ export_consents: await listExportConsents(db, realm.id) }),
    ),
    addPlayground: userEndpoint(
      {
        operationId: "add-code-playground",
        summary: "Add a code playground",
        tag: "server_and_organizations",
        access: { role: "administrator" },
        params: {
          name: str({ maxLength: 1000 }),
          pygments_language: str({ maxLength: 1000 }),
          url_template: str({ maxLength: 10_000 }).describe(
            "RFC 6570 URL template with one {code}",
          ),
        },
      },
      async ({ realm, params }) => ({
        id: await doAddPlayground(
          db,
          realm.id,
          {
            name: params.name,
            pygmentsLanguage: params.pygments_language,
            urlTemplate: params.url_template,
          },
          config.CHAT_MAX_OBJECTS_PER_USER,
        ),
      }),
    ),
    removePlayground: userEndpoint(
      {
        pathParams: ["playground_id"],
        operationId: "remove-code-playground",
        summary: "Remove a code playground",
        tag: "server_and_organizations",
        access: { role: "administrator" },
        params: {},
      },
      async ({ realm, path }) => {
        await doRemovePlayground(db, realm.id, path.playground_id);
        return {};
      },
    ),
    removeLinkifier: userEndpoint(
      {
        pathParams: ["filter_id"],
        operationId: "remove-linkifier",
        summary: "Remove a linkifier",
        tag: "server_and_organizations",
        access: { role: "administrator" },
        params: {},
      },
      async ({ realm, path }) => {
        await doRemoveLinkifier(db, realm.id, path.filter_id);
        return {};
      },
    ),
    createCustomProfileField: userEndpoint(
      {
        operationId: "create-custom-profile-field",
        summary: "Create a custom profile field",
        tag: "server_and_organizations",
        access: { role: "administrator" },
        params: {
          name: str().default(""),
          hint: str().default(""),
          field_type: int(),
          field_data: json(z.record(z.string(), z.unknown())).default({}),
          display_in_profile_summary: bool().default(false),
          required: bool().default(false),
          editable_by_user: bool().default(true),
        },
      },
      async ({ realm, params }) => ({
        id: await doCreateProfileField(db, realm.id, {
          name: params.name.trim(),
          hint: params.hint,
          fieldType: params.field_type,
          fieldData: params.field_data,
          displayInProfileSummary: params.display_in_profile_summary,
          required: params.required,
          editableByUser: params.editable_by_user,
        }),
      }),
    ),
    getCustomProfileFields: userEndpoint(
      {
        operationId: "get-custom-profile-fields",
        summary: "Get all custom profile fields",
        tag: "server_and_organizations",
        params: {},
      },
      async ({ realm }) => ({ custom_fields: await listProfileFields(db, realm.id) }),
    ),
    reorderCustomProfileFields: userEndpoint(
      {
        operationId: "reorder-custom-profile-fields",
        summary: "Reorder custom profile fields",
        tag: "server_and_organizations",
        access: { role: "administrator" },
        params: {
          order: json(ids).describe(
            "IDs of all the organization's custom profile fields, in the new order",
          ),
        },
      },
      async ({ realm, params }) => {
        await doReorderProfileFields(db, realm.id, params.order);
        return {};
      },
    ),
    getCustomEmoji: userEndpoint(
      {
        operationId: "get-custom-emoji",
        summary: "Get all custom emoji",
        tag: "server_and_organizations",
        params: {},
      },
      async ({ realm }) => ({ emoji: await listCustomEmoji(db, realm.id) }),
    ),
    uploadCustomEmoji: userEndpoint(
      {
        pathParams: ["emoji_name"],
        operationId: "upload-custom-emoji",
        summary: "Upload custom emoji",
        tag: "server_and_organizations",
        params: {},
        upload: { maxMib: config.CHAT_MAX_EMOJI_MIB },
      },
      async ({ user, path, file }) => {
        if (file === undefined) throw new Error("an upload operation without its file");
        await doAddCustomEmoji(db, uploads, user, path.emoji_name, file);
        return {};
      },
    ),
    deactivateCustomEmoji: userEndpoint(
      {
        pathParams: ["emoji_name"],
        operationId: "deactivate-custom-emoji",
        summary: "Deactivate custom emoji",
        tag: "server_and_organizations",
        params: {},
      },
      async ({ user, path }) => {
        await doDeactivateCustomEmoji(db, user, path.emoji_name);
        return {};
      },
    ),
  };
}
