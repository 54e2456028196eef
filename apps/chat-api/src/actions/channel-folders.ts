import { realmAudience, sendEvent } from "../events/queue";
import type { Database } from "../db/database";
import { JsonableError } from "@repo/envelope";
import type { ChannelFolder } from "../gen/prisma/client";
import { checkPlain, renderPlain } from "../lib/render";
import { codePoints } from "../lib/text";
import { isUniqueViolation } from "./realm-config";
import { caselessEquals } from "../db/queries/text";

/** Limits of a channel folder's name and description. */
export const MAX_FOLDER_NAME_LENGTH = 60;
export const MAX_FOLDER_DESCRIPTION_LENGTH = 1024;

/** A channel folder on the wire. */
export async function channelFolderView(folder: ChannelFolder) {
  return {
    id: folder.id,
    name: folder.name,
    description: folder.description,
    rendered_description: await renderPlain(folder.description),
    order: folder.order,
    date_created: Math.floor(folder.date_created.getTime() / 1000),
    creator_id: folder.creator_id,
    is_archived: folder.is_archived,
  };
}

/**
 * Creates a channel folder at the end of the realm's order: a name that is
 * not blank, not too long and not in use (case-insensitively). Returns its id.
 */
export async function doCreateChannelFolder(
  db: Database,
  creator: { id: number; realm_id: number },
  name: string,
  description: string,
): Promise<number> {
  const trimmed = name.trim();
  if (trimmed === "") throw new JsonableError("Channel folder name can't be empty.");
  if (codePoints(trimmed) > MAX_FOLDER_NAME_LENGTH) {
    throw new JsonableError(
      `Channel folder name too long (limit: ${MAX_FOLDER_NAME_LENGTH} characters).`,
    );
  }
  if (/[\p{Cc}\p{Cs}\p{Cn}]/u.test(trimmed))
    throw new JsonableError("Invalid character in channel folder name.");
  // Its description must render (then its readers' renders are cached).
  await checkPlain(description, creator.id);
  const duplicate = new JsonableError(`Channel folder name already in use`);
  try {
    return await db.transaction(async (tx) => {
      const taken = await tx.prisma.channelFolder.findFirst({
        where: { realm_id: creator.realm_id, name: caselessEquals(trimmed) },
      });
      if (taken !== null) throw duplicate;
      const last = await tx.prisma.channelFolder.aggregate({
        where: { realm_id: creator.realm_id },
        _max: { order: true },
      });
      const folder = await tx.prisma.channelFolder.create({
        data: {
          realm_id: creator.realm_id,
          name: trimmed,
          description,
          creator_id: creator.id,
          order: (last._max.order ?? -1) + 1,
        },
      });
      await sendEvent(tx, await realmAudience(tx, creator.realm_id), {
        type: "channel_folder",
        op: "add",
        channel_folder: await channelFolderView(folder),
      });
      return folder.id;
    });
  } catch (error) {
    throw isUniqueViolation(error) ? duplicate : error;
  }
}

/** GET /channel_folders: the realm's folders in their order, archived ones when asked for. */
export async function listChannelFolders(
  db: Database,
  realmId: number,
  includeArchived: boolean,
): Promise<Awaited<ReturnType<typeof channelFolderView>>[]> {
  const folders = await db.prisma.channelFolder.findMany({
    where: { realm_id: realmId, ...(includeArchived ? {} : { is_archived: false }) },
    orderBy: [{ order: "asc" }, { id: "asc" }],
  });
  return Promise.all(folders.map(channelFolderView));
}
