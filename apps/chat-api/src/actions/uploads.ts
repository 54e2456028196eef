import { SECRET_NAMES, serverSecret } from "../db/queries/server-secrets";
import { roleOf } from "../db/queries/users";
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import path from "node:path";
import { JsonableError } from "@repo/envelope";
import type { Database } from "../db/database";
import type { Tx } from "../db/kysely";
import {
  attachmentByPath,
  attachmentsOf,
  deleteOwnAttachment,
  filesFor,
  insertAttachment,
  setMessageFiles,
  type FileViewer,
  uploadsHeld,
} from "../db/queries/attachments";
import { lockUser } from "../db/queries/users";
import type { AuthedUser } from "../caches/auth";
import { isGuest } from "../lib/roles";
import type { ReceivedFile } from "../lib/upload-store";
import type { StoredFile, UploadStore } from "../lib/upload-store";
import { checkCap } from "./caps";

/** How long a temporary file URL (GET /user_uploads/{realm_id_str}/{filename}) works, as Zulip's. */
export const TEMPORARY_URL_SECONDS = 60;

/** Most files one message may link to (more links are left as plain links). */
export const MAX_FILES_PER_MESSAGE = 100;

/** Limits of one user's uploads. */
export interface UploadQuota {
  /** Most files kept (CHAT_MAX_OBJECTS_PER_USER). */
  files: number;
  /** Most bytes kept (CHAT_UPLOAD_QUOTA_MIB_PER_USER). */
  bytes: number;
}

/** Media types a browser may show in place (Zulip's list); others are served as downloads. */
const INLINE_TYPES = new Set([
  "application/pdf",
  "audio/aac",
  "audio/flac",
  "audio/mp4",
  "audio/mpeg",
  "audio/ogg",
  "audio/wav",
  "audio/webm",
  "image/apng",
  "image/avif",
  "image/gif",
  "image/jpeg",
  "image/png",
  "image/webp",
  "text/plain",
  "video/mp4",
  "video/ogg",
  "video/webm",
]);

const MEDIA_TYPE = /^[a-z0-9][a-z0-9!#$&^_.+-]{0,126}\/[a-z0-9][a-z0-9!#$&^_.+-]{0,126}$/;

/** The viewer a user is. */
export const viewerOf = (user: AuthedUser): FileViewer => ({
  id: user.id,
  realmId: user.realm_id,
  guest: isGuest(user.role),
});

/**
 * A file name fit for a URL, as Zulip makes them: letters, digits, `_`, `.`
 * and `-`, runs of spaces and dashes made one dash, at most 100 characters
 * (the extension kept); `uploaded-file` when nothing is left.
 */
export function urlFileName(name: string): string {
  const cleaned = name
    .normalize("NFKC")
    .replace(/[^\p{L}\p{N}_\s.-]/gu, "")
    .trim()
    .replace(/[-\s]+/g, "-");
  if (cleaned === "" || /^\.+$/.test(cleaned)) return "uploaded-file";
  if (cleaned.length <= 100) return cleaned;
  const ext = path.extname(cleaned).slice(0, 20);
  return cleaned.slice(0, 100 - ext.length) + ext;
}

/** The name a file is listed by: the client's, without control characters, at most 255 characters. */
function displayName(name: string): string {
  // eslint-disable-next-line no-control-regex
  const cleaned = name.replace(/[\u0000-\u001f\u007f]/g, "").trim();
  if (cleaned === "") return "uploaded-file";
  return Array.from(cleaned).slice(0, 255).join("");
}

/** A new file's `path_id`: `{realm_id}/{2 hex}/{24 random}/{name}`, as Zulip's. */
export function newPathId(realmId: number, name: string): string {
  const bucket = randomBytes(1).toString("hex");
  const random = randomBytes(18).toString("base64url");
  return `${String(realmId)}/${bucket}/${random}/${urlFileName(name)}`;
}

/** A file's URL on this server. */
export const fileUrl = (pathId: string): string => `/user_uploads/${pathId}`;

/** Zulip's answer to an upload past the quota. */
const quotaExceeded = () => new JsonableError("Upload would exceed your maximum quota.");

/** Whose quota an upload counts against: a bot's owner's (their bots share it), else the uploader's. */
function quotaHolder(user: AuthedUser): number {
  return user.is_bot && user.bot_owner_id !== null ? user.bot_owner_id : user.id;
}

/**
 * The bytes `user` may still upload under `quota` (with their bots' and
 * owner's files): asked before an upload's body is read, so that a file
 * past it is refused from its Content-Length or as soon as it passes it.
 */
export async function uploadRoom(db: Database, user: AuthedUser, quota: UploadQuota) {
  const held = await uploadsHeld(db, quotaHolder(user));
  return { bytes: Math.max(0, quota.bytes - held.bytes), error: quotaExceeded };
}

/**
 * POST /user_uploads: stores the received file for `user` and answers its URL.
 * Refused past the user's quota (files and bytes), checked before the file is
 * stored and again, under the user's lock, in the transaction that records it;
 * a file whose record fails is removed from the store.
 */
export async function doUploadFile(
  db: Database,
  store: UploadStore,
  user: AuthedUser,
  file: ReceivedFile,
  quota: UploadQuota,
): Promise<{ url: string; filename: string }> {
  const holder = quotaHolder(user);
  const checkQuota = (held: { count: number; bytes: number }): void => {
    checkCap(held.count, 1, quota.files, "uploaded files");
    if (held.bytes + file.size > quota.bytes) throw quotaExceeded();
  };
  checkQuota(await uploadsHeld(db, holder));
  const filename = displayName(file.name);
  const pathId = newPathId(user.realm_id, filename);
  const contentType = MEDIA_TYPE.test(file.contentType.toLowerCase())
    ? file.contentType.toLowerCase()
    : "application/octet-stream";
  await store.put(pathId, file.tempPath, file.size, contentType);
  try {
    await db.transaction(async (tx) => {
      await lockUser(tx, holder);
      checkQuota(await uploadsHeld(tx, holder));
      await insertAttachment(tx, {
        realm_id: user.realm_id,
        owner_id: user.id,
        path_id: pathId,
        file_name: filename,
        content_type: contentType,
        size: file.size,
      });
    });
  } catch (error) {
    await store.remove(pathId);
    throw error;
  }
  return { url: fileUrl(pathId), filename };
}

/** The `path_id`s of this realm's files that `content` links to (relative or absolute URLs). */
export function linkedPathIds(content: string, realmId: number): string[] {
  const found = new Set<string>();
  const pattern = new RegExp(`/user_uploads/(${String(realmId)}/[^\\s()\\[\\]<>"'\`]+)`, "g");
  for (const match of content.matchAll(pattern)) {
    const pathId = match[1]?.replace(/[.,;:!?]+$/, "");
    if (pathId !== undefined) found.add(pathId);
    if (found.size >= MAX_FILES_PER_MESSAGE) break;
  }
  return [...found];
}

/**
 * Links message `messageId` to the files its content links to that its sender
 * may see (their own, or shared with them), so that its readers may fetch
 * them; an edit (`relink`) also drops the links its new content no longer
 * has. Called in the message's transaction; no query for a message that
 * links to no file.
 */
export async function linkMessageFiles(
  tx: Tx,
  sender: { id: number; realm_id: number },
  messageId: number,
  content: string,
  relink: boolean,
): Promise<void> {
  const pathIds = linkedPathIds(content, sender.realm_id);
  if (pathIds.length === 0) {
    if (relink) await setMessageFiles(tx, messageId, []);
    return;
  }
  const role = await roleOf(tx, sender.id);
  const files = await filesFor(
    tx,
    { id: sender.id, realmId: sender.realm_id, guest: isGuest(role) },
    pathIds,
  );
  await setMessageFiles(
    tx,
    messageId,
    files.filter((f) => f.visible).map((f) => f.id),
  );
}

/** The file at `pathId` of `viewer`'s realm: 404 when there is none, 403 when it is not theirs to see. */
export async function lookupFile(db: Database, viewer: FileViewer, pathId: string) {
  const [file] = await filesFor(db, viewer, [pathId]);
  if (file === undefined) return { status: 404 } as const;
  if (!file.visible) return { status: 403 } as const;
  return { status: 200, file } as const;
}

/** The key that signs temporary URLs, made once per server (the first replica to need it writes it). */
function urlKey(db: Database): Promise<Buffer> {
  return serverSecret(db, SECRET_NAMES.temporaryFileUrls);
}

const sign = (key: Buffer, payload: string): Buffer =>
  createHmac("sha256", key).update(payload).digest();

/**
 * GET /user_uploads/{realm_id_str}/{filename}: a URL of a file `user` may see
 * that works without authentication for {@link TEMPORARY_URL_SECONDS}.
 */
export async function temporaryFileUrl(
  db: Database,
  user: AuthedUser,
  realmIdStr: string,
  filename: string,
): Promise<string> {
  const pathId = `${realmIdStr}/${filename}`;
  const found = await lookupFile(db, viewerOf(user), pathId);
  if (found.status === 404) throw new JsonableError("File not found", "BAD_REQUEST", 404);
  if (found.status === 403)
    throw new JsonableError("You are not authorized to view this file.", "BAD_REQUEST", 403);
  const expires = Math.floor(Date.now() / 1000) + TEMPORARY_URL_SECONDS;
  const payload = `${pathId}:${String(expires)}`;
  const token = `${Buffer.from(payload).toString("base64url")}.${sign(await urlKey(db), payload).toString("base64url")}`;
  return `/user_uploads/temporary/${token}/${encodeURIComponent(path.posix.basename(pathId))}`;
}

/** The `path_id` a temporary URL's token grants, if it is genuine, unexpired and names `filename`. */
async function pathIdOfToken(
  db: Database,
  token: string,
  filename: string,
): Promise<string | undefined> {
  const [encoded = "", signature = ""] = token.split(".");
  const payload = Buffer.from(encoded, "base64url").toString();
  const expected = sign(await urlKey(db), payload);
  const given = Buffer.from(signature, "base64url");
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
  const colon = payload.lastIndexOf(":");
  const pathId = payload.slice(0, colon);
  if (Number(payload.slice(colon + 1)) < Date.now() / 1000) return undefined;
  return path.posix.basename(pathId) === filename ? pathId : undefined;
}

/** The file of realm `realmId` a temporary URL grants (see {@link pathIdOfToken}). */
export async function fileOfToken(
  db: Database,
  realmId: number,
  token: string,
  filename: string,
): Promise<{ path_id: string; content_type: string } | undefined> {
  const pathId = await pathIdOfToken(db, token, filename);
  if (pathId === undefined) return undefined;
  return attachmentByPath(db, realmId, pathId);
}

/** The headers a stored file is served with: its type, shown in place only when that is safe. */
export function fileHeaders(
  file: { path_id: string; content_type: string },
  stored: StoredFile,
): Record<string, string> {
  const inline = INLINE_TYPES.has(file.content_type);
  const name = path.posix.basename(file.path_id);
  return {
    "Content-Type": inline ? file.content_type : "application/octet-stream",
    "Content-Length": String(stored.size),
    "Content-Disposition": `${inline ? "inline" : "attachment"}; filename*=UTF-8''${encodeURIComponent(name)}`,
    "Cache-Control": "private, immutable",
  };
}

/** GET /attachments: the user's files, with the messages that link to them, and their total size. */
export async function listAttachments(db: Database, user: AuthedUser) {
  const files = await attachmentsOf(db, user.id);
  return {
    attachments: files.map((f) => ({
      id: f.id,
      name: f.file_name,
      path_id: f.path_id,
      size: f.size,
      create_time: f.created_at.getTime(),
      messages: f.messages.map(({ message }) => ({
        id: message.id,
        date_sent: message.date_sent.getTime(),
      })),
    })),
    upload_space_used: files.reduce((total, f) => total + f.size, 0),
  };
}

/** DELETE /attachments/{attachment_id}: removes one of the user's files (messages keep their links). */
export async function doDeleteAttachment(
  db: Database,
  store: UploadStore,
  user: AuthedUser,
  attachmentId: number,
): Promise<void> {
  const removed = await db.transaction(async (tx) => {
    const pathId = await deleteOwnAttachment(tx, user.id, attachmentId);
    if (pathId === undefined) throw new JsonableError("Invalid attachment");
    return pathId;
  });
  await store.remove(removed);
}
