import { createHash } from "node:crypto";
import { isAdministrator, isGuest, isOwner } from "../lib/roles";
import type { Api } from "../lib/typed-endpoint";
import type { Services } from "../services";

/** GET /users/me: the caller's own account (the first authenticated call clients make). */
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
      return {
        avatar_url: `https://secure.gravatar.com/avatar/${createHash("md5").update(row.delivery_email.toLowerCase()).digest("hex")}?d=identicon&version=1`,
        avatar_version: 1,
        email: row.email,
        full_name: row.full_name,
        is_admin: isAdministrator(row.role),
        is_owner: isOwner(row.role),
        role: row.role,
        is_guest: isGuest(row.role),
        is_bot: row.is_bot,
        is_active: row.is_active,
        timezone: row.timezone,
        date_joined: row.date_joined.toISOString(),
        max_message_id: newest?.message_id ?? -1,
        user_id: row.id,
        delivery_email: row.delivery_email,
        profile_data: Object.fromEntries(
          row.custom_profile_values.map((v) => [
            String(v.field_id),
            { value: v.value, rendered_value: v.rendered_value },
          ]),
        ),
      };
    },
  );
}
