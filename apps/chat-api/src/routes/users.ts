import { isUserSubscribed } from "../actions/channel-lookups";
import { listUsers, ownUser, userByRef } from "../actions/user-view";
import { type ParamValues, bool } from "../lib/params";
import { userEndpoint } from "../lib/typed-endpoint";
import type { Services } from "../services";

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

/** The realm's users: the caller's own account (the first call clients make), the directory, one user, a user's subscription. */
export function userRoutes({ db }: Services) {
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
    getSubscriptionStatus: userEndpoint(
      {
        pathParams: ["user_id", "stream_id"],
        operationId: "get-subscription-status",
        summary: "Get subscription status",
        tag: "channels",
        params: {},
      },
      async ({ user, path }) => ({
        is_subscribed: await isUserSubscribed(db, user, path.user_id, path.stream_id),
      }),
    ),
  };
}
