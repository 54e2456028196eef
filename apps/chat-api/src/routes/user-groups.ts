import { JsonableError } from "@repo/envelope";
import { accessUserGroup, doUpdateSubgroups, isGroupMember } from "../actions/user-groups";
import { z } from "zod";
import { bool, json } from "../lib/params";
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

  api.user(
    "POST",
    "/user_groups/{user_group_id}/subgroups",
    {
      operationId: "update-user-group-subgroups",
      summary: "Update subgroups of a user group",
      tag: "users",
      params: {
        delete: json(z.array(z.int())).default([]).describe("Group IDs to remove"),
        add: json(z.array(z.int())).default([]).describe("Group IDs to add"),
      },
    },
    async ({ user, path, params }) => {
      await doUpdateSubgroups(db.prisma, user, path.user_group_id, params.add, params.delete);
      return {};
    },
  );
}
