import { listUsers, ownUser } from "../actions/user-view";
import { bool } from "../lib/params";
import { userEndpoint } from "../lib/typed-endpoint";
import type { Services } from "../services";

/** The realm's users: the caller's own account (the first call clients make) and the directory. */
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
        params: {
          client_gravatar: bool().default(true),
          include_custom_profile_fields: bool().default(false),
        },
      },
      async ({ realm, user, params }) => ({
        members: await listUsers(db, realm.id, user, {
          clientGravatar: params.client_gravatar,
          customProfileFields: params.include_custom_profile_fields,
        }),
      }),
    ),
  };
}
