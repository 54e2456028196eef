import { randomBytes } from "node:crypto";
import { createWriteStream } from "node:fs";
import { mkdir, stat } from "node:fs/promises";
import path from "node:path";
import { pipeline } from "node:stream/promises";
import { createGzip } from "node:zlib";
import { pack as tarPack, type Pack } from "tar-stream";
import type { Logger } from "pino";
import { JsonableError } from "@repo/envelope";
import type { Database } from "../db/database";
import type { Tx } from "../db/kysely";
import type { RealmExport } from "../gen/prisma/client";
import {
  exportAttachments,
  exportChannelFolders,
  exportChannels,
  exportGroups,
  exportMessagesAfter,
  exportPeople,
  exportRealmRow,
  exportSubscriptions,
  exportUserMessages,
  exportsSince,
  failRealmExport,
  finishRealmExport,
  insertRealmExport,
  realmExportsOf,
} from "../db/queries/realm-exports";
import { activeAdministratorIds, activeHumanSettings } from "../db/queries/users";
import { insertAttachment } from "../db/queries/attachments";
import { realmById } from "../db/queries/realms";
import { removeFile, type UploadStore } from "../lib/upload-store";
import { userSettings } from "../lib/user-settings";
import { sendEvent } from "../realtime/queue";
import type { AuthedUser } from "../caches/auth";
import { fileUrl, newPathId } from "./uploads";

/**
 * Data exports (POST and GET /export/realm): a tar.gz archive of the
 * organization in the upload store, written in the background in batches
 * (never one long statement, never the whole realm in memory), in the order
 * an import reads it: `realm.json` (the format, and the realm's row),
 * `users.json` (no API keys or passwords; delivery addresses in a standard
 * export only), `user_groups.json` (named and anonymous, the values of group
 * settings), `channel_folders.json`, `channels.json`, `subscriptions.json`,
 * `messages-NNNNNN.json` (1,000 messages each, with
 * their reactions, edit history and who has them with which flags),
 * `attachments.json` and the uploaded files the exported messages link to
 * under `uploads/`. Rows keep their ids: `admin import-realm` loads the
 * archive into an empty server as it was. A public export (type 1) holds the public channels; a
 * standard one (type 2) also the private channels and the direct messages
 * sent by people who consented (`allow_private_data_export`). The archive is
 * an upload of the administrator who asked for it.
 */

/** Public (1) and standard (2) exports. */
export const ExportType = { PUBLIC: 1, STANDARD: 2 } as const;

/** Exports a realm may ask for in 24 hours. */
export const MAX_EXPORTS_PER_DAY = 5;

/** Messages per file of the archive, and per read. */
const MESSAGE_BATCH = 1000;

/** An export as GET /export/realm and `realm_export` events describe it. */
function exportView(row: RealmExport, realmUrl: string) {
  return {
    id: row.id,
    acting_user_id: row.acting_user_id,
    export_time: row.date_requested.getTime() / 1000,
    deleted_timestamp: null,
    failed_timestamp: row.date_failed === null ? null : row.date_failed.getTime() / 1000,
    export_url: row.path_id === null ? null : `${realmUrl}${fileUrl(row.path_id)}`,
    pending: row.date_finished === null && row.date_failed === null,
    export_type: row.export_type,
  };
}

/** GET /export/realm (administrators): the realm's exports. */
export async function listRealmExports(db: Database, realmId: number, realmUrl: string) {
  return (await realmExportsOf(db, realmId)).map((row) => exportView(row, realmUrl));
}

/** Tells the realm's administrators of its exports (`realm_export`), inside `tx`. */
async function sendExportsEvent(tx: Tx, realmId: number, realmUrl: string): Promise<void> {
  await sendEvent(tx, await activeAdministratorIds(tx, realmId), {
    type: "realm_export",
    exports: (await realmExportsOf(tx, realmId)).map((row) => exportView(row, realmUrl)),
  });
}

/** What an export needs besides the database. */
export interface ExportDeps {
  db: Database;
  uploads: UploadStore;
  logger: Logger;
}

/** Exports run one at a time in this process: the previous one's end. */
let running: Promise<void> = Promise.resolve();

/**
 * POST /export/realm (administrators): records the request (at most
 * {@link MAX_EXPORTS_PER_DAY} a day per realm), answers its id at once and
 * writes the archive in the background; `realm_export` events when it is
 * asked for and when it is written (or failed). `done` resolves when the
 * archive is written (tests wait on it).
 */
export async function doStartRealmExport(
  deps: ExportDeps,
  user: AuthedUser,
  exportType: number,
  realmUrl: string,
): Promise<{ id: number; done: Promise<void> }> {
  const row = await deps.db.transaction(async (tx) => {
    if (
      (await exportsSince(tx, user.realm_id, new Date(Date.now() - 86_400_000))) >=
      MAX_EXPORTS_PER_DAY
    )
      throw new JsonableError("Exceeded rate limit.");
    const created = await insertRealmExport(tx, {
      realm_id: user.realm_id,
      acting_user_id: user.id,
      export_type: exportType,
    });
    await sendExportsEvent(tx, user.realm_id, realmUrl);
    return created;
  });
  const done = running.then(() => writeExport(deps, row, realmUrl));
  running = done.catch(() => undefined);
  return { id: row.id, done };
}

/** Writes `row`'s archive and records the outcome; a failure is logged and recorded, never thrown. */
async function writeExport(deps: ExportDeps, row: RealmExport, realmUrl: string): Promise<void> {
  const { db, uploads, logger } = deps;
  const temp = path.join(
    uploads.incoming,
    `export-${String(row.id)}-${randomBytes(8).toString("hex")}`,
  );
  try {
    const realm = await realmById(db, row.realm_id);
    const name = `zulip-export-${realm.subdomain === "" ? "realm" : realm.subdomain}-${String(row.id)}.tar.gz`;
    await mkdir(uploads.incoming, { recursive: true });
    const archive = tarPack();
    const written = pipeline(archive, createGzip(), createWriteStream(temp));
    // A write that fails early is reported where it is awaited, below, not as an unhandled rejection.
    written.catch(() => undefined);
    await writeEntries(db, uploads, archive, row);
    archive.finalize();
    await written;
    const { size } = await stat(temp);
    const pathId = newPathId(row.realm_id, name);
    await uploads.put(pathId, temp, size, "application/gzip");
    await db.transaction(async (tx) => {
      await insertAttachment(tx, {
        realm_id: row.realm_id,
        owner_id: row.acting_user_id,
        path_id: pathId,
        file_name: name,
        content_type: "application/gzip",
        size,
      });
      await finishRealmExport(tx, row.id, pathId);
      await sendExportsEvent(tx, row.realm_id, realmUrl);
    });
    logger.info({ export_id: row.id, size }, "realm export written");
  } catch (error) {
    logger.error({ err: error, export_id: row.id }, "realm export failed");
    await removeFile(temp).catch(() => undefined);
    await db
      .transaction(async (tx) => {
        await failRealmExport(tx, row.id);
        await sendExportsEvent(tx, row.realm_id, realmUrl);
      })
      .catch((failed: unknown) =>
        logger.error({ err: failed }, "could not record a failed export"),
      );
  }
}

/** Adds entry `name` holding `text` to the archive. */
function addText(archive: Pack, name: string, text: string): Promise<void> {
  return new Promise((resolve, reject) => {
    archive.entry({ name }, text, (error) => (error ? reject(error) : resolve()));
  });
}

/** Adds entry `name` holding the JSON of `value` to the archive. */
const addJson = (archive: Pack, name: string, value: unknown): Promise<void> =>
  addText(archive, name, JSON.stringify(value));

/** The archive's format: what `realm.json`'s `format` says, and the importer reads. */
export const EXPORT_FORMAT = 2;

/** Writes the realm's rows and files into `archive`, batch by batch. */
async function writeEntries(
  db: Database,
  uploads: UploadStore,
  archive: Pack,
  row: RealmExport,
): Promise<void> {
  const standard = row.export_type === ExportType.STANDARD;
  await addJson(archive, "realm.json", {
    format: EXPORT_FORMAT,
    export_type: row.export_type,
    exported_at: new Date(),
    realm: await exportRealmRow(db, row.realm_id),
  });
  await addJson(archive, "users.json", await exportPeople(db, row.realm_id, standard));
  const groups = await exportGroups(db, row.realm_id);
  await addJson(
    archive,
    "user_groups.json",
    groups.map(({ members, subgroups, ...group }) => ({
      ...group,
      members: members.map((m) => m.user_id),
      subgroups: subgroups.map((s) => s.subgroup_id),
    })),
  );
  const channels = await exportChannels(db, row.realm_id, standard);
  await addJson(archive, "channel_folders.json", await exportChannelFolders(db, row.realm_id));
  await addJson(archive, "channels.json", channels);
  const channelIds = channels.map((c) => c.id);
  await addJson(archive, "subscriptions.json", await exportSubscriptions(db, channelIds));
  const consenting = standard
    ? (await activeHumanSettings(db, row.realm_id))
        .filter(
          // Typed as Zulip's default (false); a person's own choice may be true.
          (person) =>
            (userSettings(person) as Record<string, unknown>).allow_private_data_export === true,
        )
        .map((person) => person.id)
    : [];
  const files = new Map<string, Awaited<ReturnType<typeof exportAttachments>>[number]>();
  let after = 0;
  for (let part = 1; ; part++) {
    const messages = await exportMessagesAfter(
      db,
      row.realm_id,
      after,
      MESSAGE_BATCH,
      channelIds,
      consenting,
    );
    if (messages.length === 0) break;
    const holders = new Map<number, { user_id: number; flags: bigint }[]>();
    for (const holder of await exportUserMessages(
      db,
      messages.map((m) => m.id),
    ))
      holders.set(holder.message_id, [...(holders.get(holder.message_id) ?? []), holder]);
    await addJson(
      archive,
      `messages-${String(part).padStart(6, "0")}.json`,
      messages.map((message) => ({
        ...message,
        // Who has the message, with their flags (a bigint, as a decimal string).
        holders: (holders.get(message.id) ?? []).map((h) => [h.user_id, h.flags.toString()]),
      })),
    );
    for (const file of await exportAttachments(
      db,
      messages.map((m) => m.id),
    ))
      files.set(file.path_id, file);
    after = messages.at(-1)?.id ?? after;
  }
  await addJson(archive, "attachments.json", [...files.values()]);
  for (const file of files.values()) {
    const stored = await uploads.open(file.path_id);
    if (stored === undefined) continue;
    await new Promise<void>((resolve, reject) => {
      const entry = archive.entry(
        { name: `uploads/${file.path_id}`, size: stored.size },
        (error) => (error ? reject(error) : resolve()),
      );
      stored.body.on("error", reject);
      stored.body.pipe(entry);
    });
  }
}
