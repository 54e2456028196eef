import { JsonableError } from "@repo/envelope";
import { accessUserGroup, isGroupMember } from "../actions/user-groups";
import { bool } from "../lib/params";
import type { Api } from "../lib/typed-endpoint";
import type { Services } from "../services";

/** User group operations. */
export function userGroupRoutes(api: Api, { db }: Services): void {
  api.user(
    "GET",
    "/user_groups/{user_group_id}/members/{user_id}",
    {
      operationId: "get-is-user-group-member",
      summary: "Get user group membership status",
      tag: "users",
      params: {
        direct_member_only: bool()
          .default(false)
          .describe("Count only direct members, not members of subgroups"),
      },
    },
    async ({ realm, path, params }) => {
      const group = await accessUserGroup(db.prisma, realm.id, path.user_group_id);
      // Bots can be queried too (feature level 458); deactivated users simply are not members.
      const target = await db.prisma.user.findFirst({
        where: { id: path.user_id, realm_id: realm.id },
      });
      if (target === null) throw new JsonableError("No such user");
      return {
        is_user_group_member: await isGroupMember(
          db.prisma,
          group.id,
          target.id,
          params.direct_member_only,
        ),
      };
    },
  );
}
