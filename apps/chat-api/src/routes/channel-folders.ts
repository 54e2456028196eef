import {
  MAX_FOLDER_DESCRIPTION_LENGTH,
  doCreateChannelFolder,
  listChannelFolders,
} from "../actions/channel-folders";
import { bool, str } from "../lib/params";
import { userEndpoint } from "../lib/typed-endpoint";
import type { Services } from "../services";

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
