import {
  MAX_FOLDER_DESCRIPTION_LENGTH,
  channelFolderView,
  doCreateChannelFolder,
} from "../actions/channel-folders";
import { bool, str } from "../lib/params";
import type { Api } from "../lib/typed-endpoint";
import type { Services } from "../services";

/** Channel folders (what `folder_id` of a channel points at). */
export function channelFolderRoutes(api: Api, { db }: Services): void {
  api.user(
    "POST",
    "/channel_folders/create",
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
      channel_folder_id: await doCreateChannelFolder(
        db.prisma,
        user,
        params.name,
        params.description,
      ),
    }),
  );

  api.user(
    "GET",
    "/channel_folders",
    {
      operationId: "get-channel-folders",
      summary: "Get channel folders",
      tag: "channels",
      params: { include_archived: bool().default(false) },
    },
    async ({ realm, params }) => {
      const folders = await db.prisma.channelFolder.findMany({
        where: { realm_id: realm.id, ...(params.include_archived ? {} : { is_archived: false }) },
        orderBy: [{ order: "asc" }, { id: "asc" }],
      });
      return { channel_folders: folders.map(channelFolderView) };
    },
  );
}
