import { activeUserIds } from "../db/queries/users";
import {
  customEmojiByPath,
  customEmojiCount,
  customEmojiOf,
  deactivateCustomEmoji,
  insertCustomEmoji,
  liveCustomEmojiByName,
  liveCustomEmojiNamed,
} from "../db/queries/custom-emoji";
import { randomBytes } from "node:crypto";
import { readFile } from "node:fs/promises";
import { JsonableError } from "@repo/envelope";
import { imageSize } from "image-size";
import type { Database } from "../db/database";
import type { Tx } from "../db/kysely";
import { sendEvent } from "../realtime/queue";
import type { CustomEmoji } from "../gen/prisma/client";
import type { AuthedUser } from "../caches/auth";
import { unicodeEmojiCode } from "../lib/emoji";
import { isAdministrator, isGuest } from "../lib/roles";
import type { ReceivedFile } from "../lib/upload-store";
import type { UploadStore } from "../lib/upload-store";
import { isUniqueViolation } from "../db/unavailable";

/** How many custom emoji (deactivated ones too: their images are kept) a realm may have. */
export const MAX_CUSTOM_EMOJI_PER_REALM = 2000;

/**
 * Largest width and height of a custom emoji's image, in pixels. Zulip
 * shrinks every emoji to 64x64; this server keeps the image as uploaded, so
 * it refuses what no client needs and what would cost clients a lot to decode.
 */
export const MAX_EMOJI_DIMENSION = 1024;

/** The image formats a custom emoji may have (found from its bytes), with their media types. */
const EMOJI_FORMATS: Record<string, { ext: string; contentType: string }> = {
  png: { ext: "png", contentType: "image/png" },
  gif: { ext: "gif", contentType: "image/gif" },
  jpg: { ext: "jpg", contentType: "image/jpeg" },
  webp: { ext: "webp", contentType: "image/webp" },
};

/** Where a custom emoji's image is served. */
export const customEmojiUrl = (pathId: string): string => `/user_avatars/${pathId}`;

/** A custom emoji as `realm_emoji` (register, GET /realm/emoji, events) shows it. */
function customEmojiView(row: CustomEmoji) {
  return {
    id: String(row.id),
    name: row.name,
    source_url: customEmojiUrl(row.path_id),
    // Zulip makes a still image of an animated emoji; this server keeps images as uploaded.
    still_url: null,
    deactivated: row.deactivated,
    author_id: row.author_id,
  };
}

/** The realm's custom emoji by id, deactivated ones too (Zulip's `realm_emoji`). */
export async function listCustomEmoji(
  tx: Tx,
  realmId: number,
): Promise<Record<string, ReturnType<typeof customEmojiView>>> {
  const rows = await customEmojiOf(tx, realmId);
  return Object.fromEntries(rows.map((row) => [String(row.id), customEmojiView(row)]));
}

/** The realm's live custom emoji named `names` (for a render, or a reaction by name). */
export async function liveCustomEmoji(
  tx: Tx,
  realmId: number,
  names: readonly string[],
): Promise<{ id: number; name: string; source_url: string }[]> {
  if (names.length === 0) return [];
  const rows = await liveCustomEmojiNamed(tx, realmId, names);
  return rows.map((r) => ({ id: r.id, name: r.name, source_url: customEmojiUrl(r.path_id) }));
}

/** Tells the realm its custom emoji changed: the whole set, as Zulip sends it. */
async function sendCustomEmojiEvent(tx: Tx, realmId: number): Promise<void> {
  await sendEvent(tx, await activeUserIds(tx, realmId), {
    type: "realm_emoji",
    op: "update",
    realm_emoji: await listCustomEmoji(tx, realmId),
  });
}

/** Zulip's rules of a custom emoji's name (after spaces become underscores). */
function checkEmojiName(name: string): void {
  if (name === "") throw new JsonableError("Emoji name is missing");
  if (name.length > 60) throw new JsonableError("Emoji name is too long (limit: 60 characters).");
  if (/^[0-9a-z_-]+$/.test(name)) {
    if (/[a-z0-9]$/.test(name)) return;
    throw new JsonableError("Emoji names must end with either a letter or digit.");
  }
  throw new JsonableError(
    "Emoji names must contain only lowercase English letters, digits, spaces, dashes, and underscores.",
  );
}

const alreadyExists = () => new JsonableError("A custom emoji with this name already exists.");

/**
 * The format of an uploaded image, from its bytes (never its name or the
 * type the client claims): PNG, GIF, JPEG or WebP, at most
 * {@link MAX_EMOJI_DIMENSION} pixels each way. Only the image's header is
 * read; nothing is decoded.
 */
function imageFormat(bytes: Buffer): { ext: string; contentType: string } {
  let found: { type?: string; width: number; height: number };
  try {
    found = imageSize(bytes);
  } catch {
    throw new JsonableError("Invalid image format");
  }
  const format = EMOJI_FORMATS[found.type ?? ""];
  if (format === undefined) throw new JsonableError("Invalid image format");
  if (found.width > MAX_EMOJI_DIMENSION || found.height > MAX_EMOJI_DIMENSION)
    throw new JsonableError("Image size exceeds limit.");
  return format;
}

/**
 * POST /realm/emoji/{emoji_name}, as Zulip: the name (spaces as
 * underscores) by Zulip's rules; not for guests (the realm's
 * `can_add_custom_emoji_group` is `role:members`); no live emoji of that
 * name; a default emoji's name only for administrators; one image, checked
 * by its bytes. The image is stored, then the emoji and the `realm_emoji`
 * event are one transaction (the image is removed if it fails).
 */
export async function doAddCustomEmoji(
  db: Database,
  store: UploadStore,
  user: AuthedUser,
  rawName: string,
  file: ReceivedFile,
): Promise<void> {
  const name = rawName.trim().replaceAll(" ", "_");
  checkEmojiName(name);
  if (isGuest(user.role)) throw new JsonableError("Insufficient permission");
  if ((await liveCustomEmojiByName(db, user.realm_id, name)) !== null) throw alreadyExists();
  if (unicodeEmojiCode(name) !== undefined && !isAdministrator(user.role))
    throw new JsonableError("Only administrators can override default emoji.");
  const format = imageFormat(await readFile(file.tempPath));
  const pathId = `${String(user.realm_id)}/emoji/images/${randomBytes(12).toString("hex")}.${format.ext}`;
  await store.put(pathId, file.tempPath, file.size, format.contentType);
  try {
    await db.transaction(async (tx) => {
      const held = await customEmojiCount(tx, user.realm_id);
      if (held >= MAX_CUSTOM_EMOJI_PER_REALM)
        throw new JsonableError(
          `This organization has too many custom emoji (limit: ${String(MAX_CUSTOM_EMOJI_PER_REALM)}).`,
        );
      await insertCustomEmoji(tx, {
        realm_id: user.realm_id,
        name,
        author_id: user.id,
        path_id: pathId,
        content_type: format.contentType,
      });
      await sendCustomEmojiEvent(tx, user.realm_id);
    });
  } catch (error) {
    await store.remove(pathId);
    throw isUniqueViolation(error) ? alreadyExists() : error;
  }
}

/**
 * DELETE /realm/emoji/{emoji_name}: deactivates the live emoji of that name
 * (its image stays, for the messages that show it), by an administrator or
 * its author, with the `realm_emoji` event.
 */
export async function doDeactivateCustomEmoji(
  db: Database,
  user: AuthedUser,
  name: string,
): Promise<void> {
  await db.transaction(async (tx) => {
    const emoji = await liveCustomEmojiByName(tx, user.realm_id, name);
    if (emoji === null) throw new JsonableError(`Emoji '${name}' does not exist`);
    if (!isAdministrator(user.role) && emoji.author_id !== user.id)
      throw new JsonableError("Must be an organization administrator or emoji author");
    await deactivateCustomEmoji(tx, emoji.id);
    await sendCustomEmojiEvent(tx, user.realm_id);
  });
}

/** A custom emoji's stored image, by its path, for serving. */
export async function customEmojiFile(
  db: Database,
  pathId: string,
): Promise<{ path_id: string; content_type: string } | undefined> {
  return customEmojiByPath(db, pathId);
}
