import { randomBytes } from "node:crypto";
import { createReadStream, createWriteStream } from "node:fs";
import { mkdir, stat } from "node:fs/promises";
import path from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { createGunzip } from "node:zlib";
import { extract } from "tar-stream";
import type { Database } from "../db/database";
import type { Tx } from "../db/kysely";
import type { Prisma } from "../gen/prisma/client";
import {
  type GroupSettingColumns,
  advanceSequences,
  insertAttachmentMessages,
  insertAttachments,
  insertChannelFolders,
  insertChannels,
  insertGroupMembers,
  insertGroupSubgroups,
  insertGroups,
  insertMessages,
  insertReactions,
  insertRealmRow,
  insertSubscriptions,
  insertUserMessages,
  insertUsers,
  linkGroupSettings,
  linkRealm,
  realmCount,
} from "../db/queries/realm-imports";
import { removeFile, type UploadStore } from "../lib/upload-store";
import { generateApiKey } from "./accounts";
import { EXPORT_FORMAT } from "./realm-export";

/**
 * `admin import-realm ARCHIVE`: loads a data export (POST /export/realm's
 * tar.gz) into an empty server, as it was: every row keeps its id, so
 * rendered messages, links and group settings stay right. It reads the
 * archive as a stream in its own order (realm, people, groups, folders,
 * channels, subscriptions, messages file by file, attachments, files),
 * writes each kind of row in one set-based statement, all in one
 * transaction (a failed import leaves the server empty), and puts the files
 * in the upload store. People get new API keys and no passwords (an export
 * holds neither); in a public export they keep their API address as their
 * delivery address.
 */

/** What an import wrote. */
export interface ImportSummary {
  realmId: number;
  subdomain: string;
  users: number;
  channels: number;
  messages: number;
  files: number;
}

/** A JSON entry's largest size: a file of 1,000 messages is far smaller. */
const MAX_JSON_BYTES = 256 * 1024 * 1024;

type Row = Record<string, unknown>;

/** A refused archive or server: the import stops and writes nothing. */
export class ImportError extends Error {}

/** Reads an entry's bytes as JSON, within {@link MAX_JSON_BYTES}. */
async function readJson(entry: AsyncIterable<Buffer>, name: string): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of entry) {
    size += chunk.length;
    if (size > MAX_JSON_BYTES) throw new ImportError(`${name} is too large`);
    chunks.push(chunk);
  }
  return JSON.parse(Buffer.concat(chunks).toString("utf8"));
}

/** An array of rows, else the archive is refused. */
function rowsOf(value: unknown, name: string): Row[] {
  if (!Array.isArray(value) || !value.every((row) => typeof row === "object" && row !== null))
    throw new ImportError(`${name} is not a list of rows`);
  return value as Row[];
}

/** A row with its timestamps (`date_*`, `*_time`, `*_at` columns) as dates again. */
function withDates<T extends Row>(row: T): T {
  const out: Row = { ...row };
  for (const [key, value] of Object.entries(row))
    if (typeof value === "string" && /^date_|_time$|_at$/.test(key)) out[key] = new Date(value);
  return out as T;
}

/** `row` without `keys`, and those keys' values apart. */
function split(row: Row, keys: readonly string[]): [Row, Row] {
  const kept: Row = {};
  const apart: Row = {};
  for (const [key, value] of Object.entries(row)) (keys.includes(key) ? apart : kept)[key] = value;
  return [kept, apart];
}

/** The realm's columns that point at groups or channels: set once those exist. */
const REALM_LINKS = [
  "moderation_request_channel_id",
  "new_stream_announcements_stream_id",
  "can_create_public_channel_group_id",
  "can_create_private_channel_group_id",
  "can_create_web_public_channel_group_id",
  "can_invite_users_group_id",
  "can_create_groups_id",
  "can_manage_all_groups_id",
  "can_add_subscribers_group_id",
  "can_access_all_users_group_id",
  "can_create_bots_group_id",
] as const;

/** A group's setting columns (they may name groups written after it). */
const GROUP_LINKS = [
  "can_add_members_group_id",
  "can_join_group_id",
  "can_leave_group_id",
  "can_manage_group_id",
  "can_mention_group_id",
  "can_remove_members_group_id",
] as const;

/** The import's state between entries. */
interface Progress {
  realmId?: number;
  subdomain?: string;
  realmLinks?: Row;
  channelIds: Set<number>;
  users: number;
  messages: number;
  /** Files attachments.json lists, by path, with their types, not yet read from the archive. */
  expectedFiles: Map<string, string>;
  storedFiles: string[];
}

/** Imports the archive at `archivePath` into the empty server `db` and its upload store. */
export async function importRealm(
  db: Database,
  uploads: UploadStore,
  archivePath: string,
): Promise<ImportSummary> {
  const progress: Progress = {
    channelIds: new Set(),
    users: 0,
    messages: 0,
    expectedFiles: new Map(),
    storedFiles: [],
  };
  try {
    await db.transaction(async (tx) => {
      if ((await realmCount(tx)) > 0)
        throw new ImportError(
          "the server already holds an organization: import into an empty database",
        );
      const reader = extract();
      const read = pipeline(createReadStream(archivePath), createGunzip(), reader);
      // A broken archive is reported where it is awaited, below.
      read.catch(() => undefined);
      for await (const entry of reader) {
        await importEntry(tx, uploads, progress, entry.header.name, entry as AsyncIterable<Buffer>);
        entry.resume();
      }
      await read;
      if (progress.realmId === undefined) throw new ImportError("the archive has no realm.json");
      if (progress.expectedFiles.size > 0)
        throw new ImportError(
          `the archive lacks ${String(progress.expectedFiles.size)} of its attachments' files`,
        );
      const links = Object.fromEntries(
        Object.entries(progress.realmLinks ?? {}).map(([key, value]) => [
          key,
          key.endsWith("_stream_id") || key.endsWith("_channel_id")
            ? progress.channelIds.has(value as number)
              ? value
              : null
            : value,
        ]),
      );
      await linkRealm(tx, progress.realmId, links);
      await advanceSequences(tx);
    });
  } catch (error) {
    await Promise.all(progress.storedFiles.map((pathId) => uploads.remove(pathId)));
    throw error;
  }
  return {
    realmId: progress.realmId ?? 0,
    subdomain: progress.subdomain ?? "",
    users: progress.users,
    channels: progress.channelIds.size,
    messages: progress.messages,
    files: progress.storedFiles.length,
  };
}

/** Imports one entry of the archive. */
async function importEntry(
  tx: Tx,
  uploads: UploadStore,
  progress: Progress,
  name: string,
  entry: AsyncIterable<Buffer>,
): Promise<void> {
  if (name.startsWith("uploads/")) {
    await storeFile(uploads, progress, name.slice("uploads/".length), entry);
    return;
  }
  if (name !== "realm.json" && progress.realmId === undefined)
    throw new ImportError(`${name} comes before realm.json`);
  const realmId = progress.realmId ?? 0;
  const value = await readJson(entry, name);
  if (name === "realm.json") {
    const { format, realm } = (value ?? {}) as { format?: unknown; realm?: Row };
    if (format !== EXPORT_FORMAT || realm === undefined)
      throw new ImportError(`unsupported archive format ${String(format)}`);
    const [row, links] = split(withDates(realm), REALM_LINKS);
    await insertRealmRow(tx, row as Prisma.RealmUncheckedCreateInput);
    progress.realmId = row.id as number;
    progress.subdomain = row.subdomain as string;
    progress.realmLinks = links;
    return;
  }
  const rows = rowsOf(value, name).map(withDates);
  if (name === "users.json") {
    await insertUsers(
      tx,
      rows.map((row) => ({
        ...(row as Prisma.UserCreateManyInput),
        delivery_email: (row.delivery_email ?? row.email) as string,
        api_key: generateApiKey(),
      })),
    );
    progress.users = rows.filter((row) => row.is_bot !== true).length;
  } else if (name === "user_groups.json") {
    const settings: GroupSettingColumns[] = [];
    const members: Prisma.UserGroupMemberCreateManyInput[] = [];
    const subgroups: Prisma.UserGroupSubgroupCreateManyInput[] = [];
    const groups = rows.map((group) => {
      const [own, links] = split(group, [...GROUP_LINKS, "members", "subgroups"]);
      const id = own.id as number;
      settings.push({ id, ...(links as Omit<GroupSettingColumns, "id">) });
      for (const userId of (links.members ?? []) as number[])
        members.push({ group_id: id, user_id: userId });
      for (const subgroupId of (links.subgroups ?? []) as number[])
        subgroups.push({ supergroup_id: id, subgroup_id: subgroupId });
      return own as Prisma.UserGroupCreateManyInput;
    });
    await insertGroups(tx, groups);
    await insertGroupMembers(tx, members);
    await insertGroupSubgroups(tx, subgroups);
    await linkGroupSettings(tx, settings);
  } else if (name === "channel_folders.json") {
    await insertChannelFolders(tx, rows as Prisma.ChannelFolderCreateManyInput[]);
  } else if (name === "channels.json") {
    await insertChannels(tx, rows as Prisma.ChannelCreateManyInput[]);
    for (const row of rows) progress.channelIds.add(row.id as number);
  } else if (name === "subscriptions.json") {
    await insertSubscriptions(tx, rows as Prisma.SubscriptionCreateManyInput[]);
  } else if (/^messages-\d{6}\.json$/.test(name)) {
    await importMessages(tx, realmId, rows);
    progress.messages += rows.length;
  } else if (name === "attachments.json") {
    for (const row of rows) {
      const pathId = String(row.path_id);
      if (!pathId.startsWith(`${String(realmId)}/`) || pathId.split("/").includes(".."))
        throw new ImportError(`attachment path ${pathId} is not one of the realm's`);
      progress.expectedFiles.set(pathId, String(row.content_type));
    }
    const ids = await insertAttachments(
      tx,
      rows.map((row) => {
        const [own] = split(row, ["messages"]);
        return { ...(own as Prisma.AttachmentCreateManyInput), realm_id: realmId };
      }),
    );
    await insertAttachmentMessages(
      tx,
      rows.flatMap((row) =>
        ((row.messages ?? []) as { message_id: number }[]).map((link) => ({
          attachment_id: ids.get(row.path_id as string) ?? 0,
          message_id: link.message_id,
        })),
      ),
    );
  } else {
    throw new ImportError(`unknown entry ${name}`);
  }
}

/** One file of messages, with their reactions and who has them. */
async function importMessages(tx: Tx, realmId: number, rows: Row[]): Promise<void> {
  const reactions: Prisma.ReactionCreateManyInput[] = [];
  const holders: Prisma.UserMessageCreateManyInput[] = [];
  const messages = rows.map((row) => {
    const [own, parts] = split(row, ["reactions", "holders", "edit_history", "edit_summary"]);
    const id = own.id as number;
    for (const reaction of (parts.reactions ?? []) as Row[])
      reactions.push({
        ...(reaction as Omit<Prisma.ReactionCreateManyInput, "message_id">),
        message_id: id,
      });
    for (const [userId, flags] of (parts.holders ?? []) as [number, string][])
      holders.push({ user_id: userId, message_id: id, flags: BigInt(flags) });
    // A JSON column's null is its default: left out.
    return {
      ...(own as Prisma.MessageCreateManyInput),
      realm_id: realmId,
      ...(parts.edit_history == null ? {} : { edit_history: parts.edit_history }),
      ...(parts.edit_summary == null ? {} : { edit_summary: parts.edit_summary }),
    };
  });
  await insertMessages(tx, messages);
  await insertReactions(tx, reactions);
  await insertUserMessages(tx, holders);
}

/** Stores an uploaded file the archive holds, at its path: only those attachments.json lists. */
async function storeFile(
  uploads: UploadStore,
  progress: Progress,
  pathId: string,
  entry: AsyncIterable<Buffer>,
): Promise<void> {
  const contentType = progress.expectedFiles.get(pathId);
  if (contentType === undefined)
    throw new ImportError(`uploads/${pathId} is not one of the archive's attachments`);
  progress.expectedFiles.delete(pathId);
  await mkdir(uploads.incoming, { recursive: true });
  const temp = path.join(uploads.incoming, `import-${randomBytes(8).toString("hex")}`);
  try {
    await pipeline(Readable.from(entry), createWriteStream(temp));
    await uploads.put(pathId, temp, (await stat(temp)).size, contentType);
    progress.storedFiles.push(pathId);
  } finally {
    await removeFile(temp).catch(() => undefined);
  }
}
