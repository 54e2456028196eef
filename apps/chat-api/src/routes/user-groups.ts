import {
  doCreateUserGroup,
  groupMembers,
  groupSubgroups,
  listUserGroups,
  realmGroupMembership,
} from "../actions/user-groups";
import { doUpdateMembers, doUpdateSubgroups } from "../actions/user-group-members";
import { doDeactivateUserGroup } from "../actions/user-group-deactivation";
import { MAX_USERS_PER_REQUEST } from "../actions/user-lookup";
import { bool, groupSettingParam, groupSettingUpdateParam, json, str } from "../http/params";
import { checkGroupName, doUpdateUserGroup } from "../actions/user-group-update";
import { z } from "zod";
import { userEndpoint } from "../http/typed-endpoint";
import type { Services } from "../http/context";

/** User group operations. */
export function userGroupRoutes({ db }: Services) {
  return {
    getIsUserGroupMember: userEndpoint(
      {
        pathParams: ["user_group_id", "user_id"],
        operationId: "get-is-user-group-member",
        summary: "Get user group membership status",
        tag: "users",
        params: {
          direct_member_only: bool()
            .default(false)
            .describe("Count only direct members, not members of subgroups"),
        },
      },
      async ({ realm, path, params }) => ({
        is_user_group_member: await realmGroupMembership(
          db,
          realm.id,
          path.user_group_id,
          path.user_id,
          params.direct_member_only,
        ),
      }),
    ),
    getUserGroupMembers: userEndpoint(
      {
        pathParams: ["user_group_id"],
        operationId: "get-user-group-members",
        summary: "Get user group members",
        tag: "users",
        params: {
          direct_member_only: bool()
            .default(false)
            .describe("Only direct members, not members of subgroups"),
        },
      },
      async ({ realm, path, params }) => ({
        members: await groupMembers(db, realm.id, path.user_group_id, params.direct_member_only),
      }),
    ),
    getUserGroupSubgroups: userEndpoint(
      {
        pathParams: ["user_group_id"],
        operationId: "get-user-group-subgroups",
        summary: "Get subgroups of a user group",
        tag: "users",
        params: {
          direct_subgroup_only: bool()
            .default(false)
            .describe("Only direct subgroups, not their subgroups"),
        },
      },
      async ({ realm, path, params }) => ({
        subgroups: await groupSubgroups(
          db,
          realm.id,
          path.user_group_id,
          params.direct_subgroup_only,
        ),
      }),
    ),
    updateUserGroupSubgroups: userEndpoint(
      {
        pathParams: ["user_group_id"],
        operationId: "update-user-group-subgroups",
        summary: "Update subgroups of a user group",
        tag: "users",
        params: {
          delete: json(z.array(z.int32())).default([]).describe("Group IDs to remove"),
          add: json(z.array(z.int32())).default([]).describe("Group IDs to add"),
        },
      },
      async ({ user, path, params }) => {
        await doUpdateSubgroups(db, user, path.user_group_id, params.add, params.delete);
        return {};
      },
    ),
    updateUserGroupMembers: userEndpoint(
      {
        pathParams: ["user_group_id"],
        operationId: "update-user-group-members",
        summary: "Update user group members",
        tag: "users",
        params: {
          delete: json(z.array(z.int32()).max(MAX_USERS_PER_REQUEST))
            .default([])
            .describe("User IDs to remove"),
          add: json(z.array(z.int32()).max(MAX_USERS_PER_REQUEST))
            .default([])
            .describe("User IDs to add"),
          delete_subgroups: json(z.array(z.int32()).max(MAX_USERS_PER_REQUEST))
            .default([])
            .describe("Group IDs to remove"),
          add_subgroups: json(z.array(z.int32()).max(MAX_USERS_PER_REQUEST))
            .default([])
            .describe("Group IDs to add"),
        },
      },
      async ({ user, path, params }) => {
        await doUpdateMembers(db, user, path.user_group_id, {
          add: params.add,
          remove: params.delete,
          addSubgroups: params.add_subgroups,
          removeSubgroups: params.delete_subgroups,
        });
        return {};
      },
    ),
    deactivateUserGroup: userEndpoint(
      {
        pathParams: ["user_group_id"],
        operationId: "deactivate-user-group",
        summary: "Deactivate a user group",
        tag: "users",
        params: {},
      },
      async ({ user, path }) => {
        await doDeactivateUserGroup(db, user, path.user_group_id);
        return {};
      },
    ),
    getUserGroups: userEndpoint(
      {
        operationId: "get-user-groups",
        summary: "Get user groups",
        tag: "users",
        params: { include_deactivated_groups: bool().default(false) },
      },
      async ({ realm, params }) => ({
        user_groups: await listUserGroups(db, realm.id, params.include_deactivated_groups),
      }),
    ),
    createUserGroup: userEndpoint(
      {
        operationId: "create-user-group",
        summary: "Create a user group",
        tag: "users",
        access: { guests: false },
        params: {
          name: str({ maxLength: 100, notBlank: true }),
          description: str({ maxLength: 1024 }),
          members: json(z.array(z.int32())),
          subgroups: json(z.array(z.int32())).default([]),
          can_add_members_group: groupSettingParam().optional(),
          can_join_group: groupSettingParam().optional(),
          can_leave_group: groupSettingParam().optional(),
          can_manage_group: groupSettingParam().optional(),
          can_mention_group: groupSettingParam().optional(),
          can_remove_members_group: groupSettingParam().optional(),
        },
      },
      async ({ user, params }) => {
        const { name, description, members, subgroups, ...settings } = params;
        const groupId = await doCreateUserGroup(db, user, {
          name: checkGroupName(name.trim()),
          description,
          members,
          subgroups,
          settings,
        });
        return { group_id: groupId };
      },
    ),
    updateUserGroup: userEndpoint(
      {
        pathParams: ["user_group_id"],
        operationId: "update-user-group",
        summary: "Update a user group",
        tag: "users",
        access: { guests: false },
        params: {
          name: str({ maxLength: 1000 }).optional(),
          description: str({ maxLength: 1024 }).optional(),
          can_add_members_group: groupSettingUpdateParam().optional(),
          can_join_group: groupSettingUpdateParam().optional(),
          can_leave_group: groupSettingUpdateParam().optional(),
          can_manage_group: groupSettingUpdateParam().optional(),
          can_mention_group: groupSettingUpdateParam().optional(),
          can_remove_members_group: groupSettingUpdateParam().optional(),
        },
      },
      async ({ user, path, params }) => {
        const { name, description, ...settings } = params;
        await doUpdateUserGroup(db, user, path.user_group_id, { name, description, settings });
        return {};
      },
    ),
  };
}
