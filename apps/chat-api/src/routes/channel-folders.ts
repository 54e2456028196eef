import { z } from "zod";
import {
  MAX_FOLDER_DESCRIPTION_LENGTH,
  MAX_FOLDERS_PER_REALM,
  doCreateChannelFolder,
  doReorderChannelFolders,
  doUpdateChannelFolder,
  listChannelFolders,
} from "../actions/channel-folders";
import { bool, json, str } from "../http/params";
import { userEndpoint } from "../http/typed-endpoint";
import type { Services } from "../http/context";

/** Channel folders (what `folder_id` of a channel points at). */
export function channelFolderRoutes({ db }: Services) {
  return {
    createChannelFolder: userEndpoint(
      {
        operationId: "create-channel-folder",
        summary: "Create a channel folder",
        tag: "channels",
        access: { role: "administrator" },
        params: {
          name: str(),
          description: str({ maxLength: MAX_FOLDER_DESCRIPTION_LENGTH }).default(""),
        },
      },
      async ({ user, params }) => ({
        channel_folder_id: await doCreateChannelFolder(db, user, params.name, params.description),
      }),
    ),
    updateChannelFolder: userEndpoint(
      {
        pathParams: ["channel_folder_id"],
        operationId: "update-channel-folder",
        summary: "Update a channel folder",
        tag: "channels",
        access: { role: "administrator" },
        params: {
          name: str().optional(),
          description: str({ maxLength: MAX_FOLDER_DESCRIPTION_LENGTH }).optional(),
          is_archived: bool().optional(),
        },
      },
      async ({ user, path, params }) => {
        await doUpdateChannelFolder(db, user, path.channel_folder_id, {
          name: params.name,
          description: params.description,
          isArchived: params.is_archived,
        });
        return {};
      },
    ),
    reorderChannelFolders: userEndpoint(
      {
        operationId: "patch-channel-folders",
        summary: "Reorder channel folders",
        tag: "channels",
        access: { role: "administrator" },
        params: {
          order: json(z.array(z.int32()).max(MAX_FOLDERS_PER_REALM)).describe(
            "IDs of all the organization's channel folders, in the new order",
          ),
        },
      },
      async ({ realm, params }) => {
        await doReorderChannelFolders(db, realm.id, params.order);
        return {};
      },
    ),
    getChannelFolders: userEndpoint(
      {
        operationId: "get-channel-folders",
        summary: "Get channel folders",
        tag: "channels",
        params: { include_archived: bool().default(false) },
      },
      async ({ realm, params }) => ({
        channel_folders: await listChannelFolders(db, realm.id, params.include_archived),
      }),
    ),
  };
}
