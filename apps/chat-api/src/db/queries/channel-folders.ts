import type { Tx } from "../kysely";
import { caselessEquals } from "./text";

/** How many channel folders the realm has, archived ones included. */
export function folderCount(tx: Tx, realmId: number): Promise<number> {
  return tx.prisma.channelFolder.count({ where: { realm_id: realmId } });
}

/** A new channel folder's columns. */
export interface NewChannelFolder {
  realm_id: number;
  name: string;
  description: string;
  creator_id: number;
  order: number;
}

/** Stores a channel folder; answers it as stored. */
export function insertChannelFolder(tx: Tx, row: NewChannelFolder) {
  return tx.prisma.channelFolder.create({ data: row });
}

/** Whether a folder of the realm other than `except` is named `name` (any case). */
export async function folderNameTaken(
  tx: Tx,
  realmId: number,
  name: string,
  except: number | undefined,
): Promise<boolean> {
  const taken = await tx.prisma.channelFolder.findFirst({
    where: {
      realm_id: realmId,
      name: caselessEquals(name),
      ...(except === undefined ? {} : { id: { not: except } }),
    },
    select: { id: true },
  });
  return taken !== null;
}

/** The realm's channel folder `folderId`, or null. */
export function folderInRealm(tx: Tx, realmId: number, folderId: number) {
  return tx.prisma.channelFolder.findFirst({ where: { id: folderId, realm_id: realmId } });
}

/** What an update of a channel folder changes. */
export interface FolderChange {
  name?: string;
  description?: string;
  is_archived?: boolean;
}

/** Updates channel folder `folderId`. */
export async function updateChannelFolder(
  tx: Tx,
  folderId: number,
  change: FolderChange,
): Promise<void> {
  await tx.prisma.channelFolder.update({ where: { id: folderId }, data: change });
}

/** Whether a live channel is in folder `folderId`. */
export async function folderHoldsLiveChannel(tx: Tx, folderId: number): Promise<boolean> {
  const channel = await tx.prisma.channel.findFirst({
    where: { folder_id: folderId, is_archived: false },
    select: { id: true },
  });
  return channel !== null;
}

/** The realm's channel folders in their order (archived ones if asked). */
export function foldersOf(tx: Tx, realmId: number, includeArchived: boolean) {
  return tx.prisma.channelFolder.findMany({
    where: { realm_id: realmId, ...(includeArchived ? {} : { is_archived: false }) },
    orderBy: [{ order: "asc" }, { id: "asc" }],
  });
}

/** Whether `folderId` is a live channel folder of the realm. */
export async function isLiveFolder(tx: Tx, realmId: number, folderId: number): Promise<boolean> {
  const folder = await tx.prisma.channelFolder.findFirst({
    where: { id: folderId, realm_id: realmId, is_archived: false },
    select: { id: true },
  });
  return folder !== null;
}
