import { activeUserIds } from "../db/queries/users";
import {
  folderCount,
  folderHoldsLiveChannel,
  folderInRealm,
  folderNameTaken,
  foldersOf,
  insertChannelFolder,
  updateChannelFolder,
} from "../db/queries/channel-folders";
import { lockOrderedRows, nextOrder, setRowOrder } from "../db/queries/realms";
import { sendEvent, sendEvents } from "../realtime/queue";
import type { Database } from "../db/database";
import type { Tx } from "../db/kysely";
import { positionsOf } from "./realm-order";
import { JsonableError } from "@repo/envelope";
import type { ChannelFolder } from "../gen/prisma/client";
import { checkPlain, renderPlain } from "../lib/render";
import { codePoints } from "../lib/text";
import { isUniqueViolation } from "../db/unavailable";

/** Limits of a channel folder's name and description. */
export const MAX_FOLDER_NAME_LENGTH = 60;
export const MAX_FOLDER_DESCRIPTION_LENGTH = 1024;
/** How many folders (archived ones too) a realm may have. */
export const MAX_FOLDERS_PER_REALM = 1000;

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
  const trimmed = checkFolderName(name);
  // Its description must render (then its readers' renders are cached).
  await checkPlain(description, creator.id);
  try {
    return await db.transaction(async (tx) => {
      await checkNameFree(tx, creator.realm_id, trimmed, undefined);
      if ((await folderCount(tx, creator.realm_id)) >= MAX_FOLDERS_PER_REALM)
        throw new JsonableError(
          `This organization has too many channel folders (limit: ${String(MAX_FOLDERS_PER_REALM)}).`,
        );
      const folder = await insertChannelFolder(tx, {
        realm_id: creator.realm_id,
        name: trimmed,
        description,
        creator_id: creator.id,
        order: await nextOrder(tx, "channel_folders", creator.realm_id),
      });
      await sendEvent(tx, await activeUserIds(tx, creator.realm_id), {
        type: "channel_folder",
        op: "add",
        channel_folder: await channelFolderView(folder),
      });
      return folder.id;
    });
  } catch (error) {
    throw isUniqueViolation(error) ? nameInUse() : error;
  }
}

/** A folder name as stored (trimmed), or the error of one that may not be. */
function checkFolderName(name: string): string {
  const trimmed = name.trim();
  if (trimmed === "") throw new JsonableError("Channel folder name can't be empty.");
  if (codePoints(trimmed) > MAX_FOLDER_NAME_LENGTH) {
    throw new JsonableError(
      `Channel folder name too long (limit: ${MAX_FOLDER_NAME_LENGTH} characters).`,
    );
  }
  if (/[\p{Cc}\p{Cs}\p{Cn}]/u.test(trimmed))
    throw new JsonableError("Invalid character in channel folder name.");
  return trimmed;
}

function nameInUse(): JsonableError {
  return new JsonableError("Channel folder name already in use");
}

/** Throws unless no folder of the realm but `except` has `name` (case-insensitively). */
async function checkNameFree(tx: Tx, realmId: number, name: string, except: number | undefined) {
  if (await folderNameTaken(tx, realmId, name, except)) throw nameInUse();
}

/** What PATCH /channel_folders/{id} may change (undefined: left as it is). */
export interface FolderChange {
  name: string | undefined;
  description: string | undefined;
  isArchived: boolean | undefined;
}

/**
 * PATCH /channel_folders/{id}, as Zulip: a folder of the caller's realm;
 * each field sent that differs is changed, and the realm gets one
 * `channel_folder` `update` event per kind of change (name; description
 * with its rendering; archived), in one transaction. A folder that still
 * holds a channel that is not archived cannot be archived.
 */
export async function doUpdateChannelFolder(
  db: Database,
  actor: { id: number; realm_id: number },
  folderId: number,
  change: FolderChange,
): Promise<void> {
  const name = change.name === undefined ? undefined : checkFolderName(change.name);
  // A new description must render; its rendering goes in the event.
  if (change.description !== undefined) await checkPlain(change.description, actor.id);
  const rendered =
    change.description === undefined ? undefined : await renderPlain(change.description);
  try {
    await db.transaction(async (tx) => {
      const folder = await folderInRealm(tx, actor.realm_id, folderId);
      if (folder === null) throw new JsonableError("Invalid channel folder ID");
      const changes: Record<string, string | boolean>[] = [];
      if (name !== undefined && name !== folder.name) {
        await checkNameFree(tx, actor.realm_id, name, folder.id);
        changes.push({ name });
      }
      if (change.description !== undefined && change.description !== folder.description)
        changes.push({
          description: change.description,
          rendered_description: rendered ?? "",
        });
      if (change.isArchived !== undefined && change.isArchived !== folder.is_archived) {
        if (change.isArchived && (await folderHoldsLiveChannel(tx, folder.id)))
          throw new JsonableError(
            "You need to remove all the channels from this folder to archive it.",
          );
        changes.push({ is_archived: change.isArchived });
      }
      if (changes.length === 0) return;
      await updateChannelFolder(tx, folder.id, {
        ...(name === undefined ? {} : { name }),
        ...(change.description === undefined ? {} : { description: change.description }),
        ...(change.isArchived === undefined ? {} : { is_archived: change.isArchived }),
      });
      const audience = await activeUserIds(tx, actor.realm_id);
      await sendEvents(
        tx,
        changes.map((data) => ({
          userIds: audience,
          event: { type: "channel_folder", op: "update", channel_folder_id: folder.id, data },
        })),
      );
    });
  } catch (error) {
    throw isUniqueViolation(error) ? nameInUse() : error;
  }
}

/**
 * PATCH /channel_folders: the realm's folders in `order`, which must name
 * each of them exactly once (Zulip's "Invalid order mapping."; it lets
 * through ids of no folder and repeats, which would reach every client in
 * the event, so they are refused here too). One statement, one event.
 */
export async function doReorderChannelFolders(
  db: Database,
  realmId: number,
  order: readonly number[],
): Promise<void> {
  await db.transaction(async (tx) => {
    const existing = new Set(await lockOrderedRows(tx, "channel_folders", realmId));
    if (
      new Set(order).size !== order.length ||
      existing.size !== order.length ||
      order.some((id) => !existing.has(id))
    )
      throw new JsonableError("Invalid order mapping.");
    await setRowOrder(tx, "channel_folders", realmId, positionsOf(order));
    await sendEvent(tx, await activeUserIds(tx, realmId), {
      type: "channel_folder",
      op: "reorder",
      order: [...order],
    });
  });
}

/** GET /channel_folders: the realm's folders in their order, archived ones when asked for. */
export async function listChannelFolders(
  db: Database,
  realmId: number,
  includeArchived: boolean,
): Promise<Awaited<ReturnType<typeof channelFolderView>>[]> {
  const folders = await foldersOf(db, realmId, includeArchived);
  return Promise.all(folders.map(channelFolderView));
}
