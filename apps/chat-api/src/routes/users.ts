import { doSetStatus, MAX_STATUS_TEXT_LENGTH, userStatus } from "../actions/user-status";
import { doMuteUser, doUnmuteUser } from "../actions/muted-users";
import { subscriptionStatusOf } from "../actions/channels";
import { listUsers, ownUser, userByRef } from "../actions/user-view";
import { z } from "zod";
import { doChangeAlertWords, listAlertWords } from "../actions/alert-words";
import { type ParamValues, bool, int, json, oneOf, settingParams, str } from "../http/params";
import { SETTING_RULES, type SettingValue } from "../lib/user-settings";
import { doUpdateSettings } from "../actions/settings";
import { doCreateUser, doUpdatePointer, readPointer } from "../actions/accounts";
import { userEndpoint } from "../http/typed-endpoint";
import {
  doDeactivateOwnUser,
  doDeactivateUser,
  doReactivateUser,
  doUpdateUser,
} from "../actions/user-admin";
import { realmUrl } from "../lib/realm-url";
import type { Services } from "../http/context";

/** PATCH /settings' parameters: every setting of SETTING_RULES, each optional. */
const SETTING_PARAMS = settingParams(SETTING_RULES);

/** How GET /users, GET /users/{user_id} and GET /users/{email} describe users. */
const userParams = {
  client_gravatar: bool().default(true),
  include_custom_profile_fields: bool().default(false),
};

/** {@link userParams} as the user views take them. */
const viewOptions = (params: ParamValues<typeof userParams>) => ({
  clientGravatar: params.client_gravatar,
  customProfileFields: params.include_custom_profile_fields,
});

/** PATCH /users/{user_id} and /users/{email}'s parameters. */
const updateUserParams = {
  full_name: str({ maxLength: 1000 }).optional(),
  role: int().optional(),
  profile_data: json(
    z
      .array(
        z
          .object({
            id: z.number().int(),
            value: z.union([z.string().max(10_000), z.array(z.number().int()).max(1000), z.null()]),
          })
          .strict(),
      )
      .max(1000),
  ).optional(),
};

/** {@link updateUserParams} as doUpdateUser takes them. */
const userChange = (params: ParamValues<typeof updateUserParams>) => ({
  fullName: params.full_name,
  role: params.role,
  profileData: params.profile_data,
});

/** The realm's users: the caller's own account (the first call clients make), the directory, one user, a user's subscription. */
export function userRoutes(services: Services) {
  const { db, config } = services;
  /** POST and DELETE /users/me/alert_words: the same change, adding or removing. */
  const alertWordsEndpoint = (op: "add" | "remove") =>
    userEndpoint(
      {
        operationId: op === "add" ? "add-alert-words" : "remove-alert-words",
        summary: op === "add" ? "Add alert words" : "Remove alert words",
        tag: "users",
        params: { alert_words: json(z.array(z.string()).max(1000)) },
      },
      async ({ user, params }) => ({
        alert_words: await doChangeAlertWords(
          db,
          user,
          params.alert_words,
          op,
          config.CHAT_MAX_OBJECTS_PER_USER,
        ),
      }),
    );
  return {
    getOwnUser: userEndpoint(
      { operationId: "get-own-user", summary: "Get own user", tag: "users", params: {} },
      async ({ user }) => ownUser(db, user.id),
    ),
    getUsers: userEndpoint(
      {
        operationId: "get-users",
        summary: "Get all users",
        tag: "users",
        params: userParams,
      },
      async ({ realm, user, params }) => ({
        members: await listUsers(db, realm.id, user, viewOptions(params)),
      }),
    ),
    getPointer: userEndpoint(
      {
        operationId: "get-pointer",
        summary: "Get the pointer (legacy)",
        deprecated: true,
        tag: "users",
        params: {},
      },
      async ({ user }) => ({ pointer: await readPointer(db, user.id) }),
    ),
    updatePointer: userEndpoint(
      {
        operationId: "update-pointer",
        summary: "Move the pointer (legacy)",
        deprecated: true,
        tag: "users",
        params: { pointer: int({ min: 0 }) },
      },
      async ({ user, params }) => {
        await doUpdatePointer(db, user.id, params.pointer);
        return {};
      },
    ),
    createUser: userEndpoint(
      {
        operationId: "create-user",
        summary: "Create a user",
        tag: "users",
        access: { role: "administrator" },
        params: { email: str(), password: str(), full_name: str() },
      },
      async ({ user, params }) => ({
        user_id: await doCreateUser(db, user, {
          email: params.email,
          password: params.password,
          fullName: params.full_name,
        }),
      }),
    ),
    getUser: userEndpoint(
      {
        pathParams: ["user_id"],
        operationId: "get-user",
        summary: "Get a user",
        tag: "users",
        params: userParams,
      },
      async ({ user, path, params }) => ({
        user: await userByRef(db, user, path.user_id, viewOptions(params)),
      }),
    ),
    getUserByEmail: userEndpoint(
      {
        pathParams: ["email"],
        operationId: "get-user-by-email",
        summary: "Get a user by email",
        tag: "users",
        params: userParams,
      },
      async ({ user, path, params }) => ({
        user: await userByRef(db, user, path.email, viewOptions(params)),
      }),
    ),
    updateUser: userEndpoint(
      {
        pathParams: ["user_id"],
        operationId: "update-user",
        summary: "Update a user",
        tag: "users",
        access: { role: "administrator" },
        params: updateUserParams,
      },
      async ({ user, path, params }) => {
        await doUpdateUser(services, user, path.user_id, userChange(params));
        return {};
      },
    ),
    updateUserByEmail: userEndpoint(
      {
        pathParams: ["email"],
        operationId: "update-user-by-email",
        summary: "Update a user by email",
        tag: "users",
        access: { role: "administrator" },
        params: updateUserParams,
      },
      async ({ user, path, params }) => {
        await doUpdateUser(services, user, path.email, userChange(params));
        return {};
      },
    ),
    deactivateUser: userEndpoint(
      {
        pathParams: ["user_id"],
        operationId: "deactivate-user",
        summary: "Deactivate a user",
        tag: "users",
        access: { role: "administrator" },
        params: { deactivation_notification_comment: str({ maxLength: 2000 }).optional() },
      },
      async ({ user, realm, path, params }) => {
        await doDeactivateUser(
          services,
          user,
          path.user_id,
          params.deactivation_notification_comment,
          {
            name: realm.name,
            url: realmUrl(config, realm),
          },
        );
        return {};
      },
    ),
    reactivateUser: userEndpoint(
      {
        pathParams: ["user_id"],
        operationId: "reactivate-user",
        summary: "Reactivate a user",
        tag: "users",
        access: { role: "administrator" },
        params: {},
      },
      async ({ user, path }) => {
        await doReactivateUser(services, user, path.user_id);
        return {};
      },
    ),
    deactivateOwnUser: userEndpoint(
      {
        operationId: "deactivate-own-user",
        summary: "Deactivate own user",
        tag: "users",
        params: {},
      },
      async ({ user }) => {
        await doDeactivateOwnUser(services, user);
        return {};
      },
    ),
    getSubscriptionStatus: userEndpoint(
      {
        pathParams: ["user_id", "stream_id"],
        operationId: "get-subscription-status",
        summary: "Get subscription status",
        tag: "channels",
        params: {},
      },
      async ({ user, path }) => ({
        is_subscribed: await subscriptionStatusOf(db, user, path.user_id, path.stream_id),
      }),
    ),
    getUserStatus: userEndpoint(
      {
        pathParams: ["user_id"],
        operationId: "get-user-status",
        summary: "Get a user's status",
        tag: "users",
        params: {},
      },
      async ({ user, path }) => ({ status: await userStatus(db, user, path.user_id) }),
    ),
    muteUser: userEndpoint(
      {
        pathParams: ["muted_user_id"],
        operationId: "mute-user",
        summary: "Mute a user",
        tag: "users",
        params: {},
      },
      async ({ user, path }) => {
        await doMuteUser(db, user, path.muted_user_id, config.CHAT_MAX_OBJECTS_PER_USER);
        return {};
      },
    ),
    unmuteUser: userEndpoint(
      {
        pathParams: ["muted_user_id"],
        operationId: "unmute-user",
        summary: "Unmute a user",
        tag: "users",
        params: {},
      },
      async ({ user, path }) => {
        await doUnmuteUser(db, user, path.muted_user_id);
        return {};
      },
    ),
    getAlertWords: userEndpoint(
      {
        operationId: "get-alert-words",
        summary: "Get all alert words",
        tag: "users",
        params: {},
      },
      async ({ user }) => ({ alert_words: await listAlertWords(db, user.id) }),
    ),
    addAlertWords: alertWordsEndpoint("add"),
    removeAlertWords: alertWordsEndpoint("remove"),
    setStatus: userEndpoint(
      {
        operationId: "update-status",
        summary: "Update your status",
        tag: "users",
        params: {
          status_text: str({ maxLength: MAX_STATUS_TEXT_LENGTH }).optional(),
          away: bool().optional().describe("Deprecated; accepted and ignored"),
          emoji_name: str({ maxLength: 100 }).optional(),
          emoji_code: str({ maxLength: 100 }).optional(),
          // "" with an empty emoji_name: the mobile app clears its status emoji so.
          reaction_type: oneOf([
            "unicode_emoji",
            "realm_emoji",
            "zulip_extra_emoji",
            "",
          ]).optional(),
        },
      },
      async ({ user, params }) => {
        await doSetStatus(db, user, {
          statusText: params.status_text,
          emojiName: params.emoji_name,
          emojiCode: params.emoji_code,
          reactionType: params.reaction_type === "" ? undefined : params.reaction_type,
        });
        return {};
      },
    ),
    updateSettings: userEndpoint(
      {
        operationId: "update-settings",
        summary: "Update settings",
        tag: "users",
        params: {
          full_name: str({ maxLength: 100 }).optional(),
          ...SETTING_PARAMS,
        },
      },
      async ({ user, params }) => {
        const { full_name: fullName, ...rest } = params;
        const changes = Object.fromEntries(
          Object.entries(rest).filter(
            (entry): entry is [string, SettingValue] => entry[1] !== undefined,
          ),
        );
        await doUpdateSettings(services, user, changes, fullName);
        return {};
      },
    ),
  };
}
