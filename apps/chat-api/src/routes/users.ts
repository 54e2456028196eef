import { userView } from "../actions/user-view";
import { bool } from "../lib/params";
import { isAdministrator } from "../lib/roles";
import type { Api } from "../lib/typed-endpoint";
import type { Services } from "../services";

/** The realm's users: the caller's own account (the first call clients make) and the directory. */
export function userRoutes(api: Api, { db }: Services): void {
  api.user(
    "GET",
    "/users/me",
    { operationId: "get-own-user", summary: "Get own user", tag: "users", params: {} },
    async ({ user }) => {
      const row = await db.prisma.user.findUniqueOrThrow({
        where: { id: user.id },
        include: { custom_profile_values: true },
      });
      const newest = await db.prisma.userMessage.findFirst({
        where: { user_id: user.id },
        orderBy: { message_id: "desc" },
        select: { message_id: true },
      });
      // Zulip's own-user answer has no bot fields (GET /users has them).
      const {
        bot_type: _type,
        bot_owner_id: _owner,
        ...view
      } = userView(row, {
        showDeliveryEmail: true,
        clientGravatar: false,
      });
      return { ...view, max_message_id: newest?.message_id ?? -1 };
    },
  );

  api.user(
    "GET",
    "/users",
    {
      operationId: "get-users",
      summary: "Get all users",
      tag: "users",
      params: {
        client_gravatar: bool().default(true),
        include_custom_profile_fields: bool().default(false),
      },
    },
    async ({ realm, user, params }) => {
      const rows = await db.prisma.user.findMany({
        where: { realm_id: realm.id },
        include: { custom_profile_values: params.include_custom_profile_fields },
        orderBy: { id: "asc" },
      });
      const admin = isAdministrator(user.role);
      return {
        members: rows.map((row) => {
          const view = userView(row, {
            showDeliveryEmail: admin || row.id === user.id,
            clientGravatar: params.client_gravatar,
          });
          // Zulip sends profile data for humans only.
          if (row.is_bot) delete view.profile_data;
          return view;
        }),
      };
    },
  );
}
