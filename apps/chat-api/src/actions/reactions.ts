import type { Tx } from "../db/kysely";
import type { Database } from "../db/database";
import { JsonableError } from "@repo/envelope";
import { sendEvent } from "../realtime/queue";
import type { AuthedUser } from "../caches/auth";
import { isUnicodeEmoji, isUnicodeEmojiCode, unicodeEmojiCode } from "../lib/emoji";
import { checkCap } from "./caps";
import { lockUser } from "../db/queries/users";
import { activeHolders } from "../db/queries/user-messages";
import { customEmojiById, liveCustomEmojiByName } from "../db/queries/custom-emoji";
import { deleteReaction, insertReaction, reactionsOfUser } from "../db/queries/reactions";

/** Zulip's kinds of reaction emoji. */
export type ReactionType = "unicode_emoji" | "realm_emoji" | "zulip_extra_emoji";

/** An emoji as a reaction request names it. */
export interface EmojiRef {
  emojiName: string | undefined;
  emojiCode: string | undefined;
  reactionType: ReactionType | undefined;
}

/** Most different emoji one user may put on one message. */
export const MAX_REACTIONS_PER_USER_MESSAGE = 20;

const missingEmoji = (name: string) => new JsonableError(`Emoji '${name}' does not exist`);

/**
 * The emoji a request names, checked as Zulip checks it: by name, the
 * realm's live custom emoji first, then Zulip's own `zulip` emoji, then a
 * unicode emoji (any of Zulip's names); by code, a unicode emoji with one of
 * its names, or a live custom emoji (its id) with its name.
 */
export async function resolveEmoji(
  tx: Tx,
  realmId: number,
  ref: EmojiRef,
): Promise<{ name: string; code: string; type: ReactionType }> {
  const name = ref.emojiName;
  let type = ref.reactionType;
  if (type === undefined && ref.emojiCode === undefined && name !== undefined) {
    // A name alone: the realm's live custom emoji of that name first.
    const custom = await liveCustomEmojiByName(tx, realmId, name);
    if (custom !== null) return { name, code: String(custom.id), type: "realm_emoji" };
    type = name === "zulip" ? "zulip_extra_emoji" : "unicode_emoji";
  }
  type ??= "unicode_emoji";
  if (type === "zulip_extra_emoji") {
    if ((name ?? "zulip") !== "zulip" || (ref.emojiCode ?? "zulip") !== "zulip")
      throw new JsonableError("Invalid emoji name.");
    return { name: "zulip", code: "zulip", type };
  }
  if (type === "realm_emoji") return customEmojiRef(tx, realmId, ref);
  if (ref.emojiCode !== undefined) {
    if (!isUnicodeEmojiCode(ref.emojiCode)) throw new JsonableError("Invalid emoji code.");
    if (name === undefined) return { name: ref.emojiCode, code: ref.emojiCode, type };
    if (!isUnicodeEmoji(name, ref.emojiCode)) throw new JsonableError("Invalid emoji name.");
    return { name, code: ref.emojiCode, type };
  }
  if (name === undefined)
    throw new JsonableError("At least one of emoji_name or emoji_code must be given");
  const code = unicodeEmojiCode(name);
  if (code === undefined) throw missingEmoji(name);
  return { name, code, type };
}

/** A live custom emoji of the realm, by code (its id, with its name) or by name. */
async function customEmojiRef(
  tx: Tx,
  realmId: number,
  ref: EmojiRef,
): Promise<{ name: string; code: string; type: "realm_emoji" }> {
  if (ref.emojiCode === undefined) {
    const found =
      ref.emojiName === undefined ? null : await liveCustomEmojiByName(tx, realmId, ref.emojiName);
    if (found === null) throw missingEmoji(ref.emojiName ?? "");
    return { name: found.name, code: String(found.id), type: "realm_emoji" };
  }
  const id = /^[0-9]{1,9}$/.test(ref.emojiCode) ? Number(ref.emojiCode) : undefined;
  const emoji = id === undefined ? null : await customEmojiById(tx, realmId, id);
  if (emoji === null) throw new JsonableError("Invalid custom emoji.");
  if (ref.emojiName !== undefined && emoji.name !== ref.emojiName)
    throw new JsonableError("Invalid custom emoji name.");
  if (emoji.deactivated) throw new JsonableError("This custom emoji has been deactivated.");
  return { name: emoji.name, code: String(emoji.id), type: "realm_emoji" };
}

/** Who has message `messageId` (its recipients): the audience of its reaction events. */
async function messageAudience(tx: Tx, user: AuthedUser, messageId: number): Promise<number[]> {
  const ids = (await activeHolders(tx, [messageId])).map((r) => r.user_id);
  if (!ids.includes(user.id)) throw new JsonableError("Invalid message(s)");
  return ids;
}

/**
 * POST and DELETE /messages/{message_id}/reactions: the caller reacts to one
 * of their messages with an emoji, or takes the reaction back, in one
 * transaction with the `reaction` event to everyone who has the message.
 */
export async function doReact(
  db: Database,
  user: AuthedUser,
  messageId: number,
  ref: EmojiRef,
  op: "add" | "remove",
): Promise<void> {
  await db.transaction(async (tx) => {
    const audience = await messageAudience(tx, user, messageId);
    let emoji: { name: string; code: string; type: ReactionType };
    if (op === "add") {
      emoji = await resolveEmoji(tx, user.realm_id, ref);
      // One reaction change at a time per user: the duplicate check and the cap hold.
      await lockUser(tx, user.id);
      const mine = await reactionsOfUser(tx, messageId, user.id);
      if (mine.some((r) => r.emoji_code === emoji.code && r.reaction_type === emoji.type))
        throw new JsonableError("Reaction already exists.");
      checkCap(mine.length, 1, MAX_REACTIONS_PER_USER_MESSAGE, "reactions on this message");
      await insertReaction(tx, messageId, user.id, {
        emoji_name: emoji.name,
        emoji_code: emoji.code,
        reaction_type: emoji.type,
      });
    } else {
      const named =
        ref.emojiCode === undefined && ref.emojiName !== undefined
          ? await resolveEmoji(tx, user.realm_id, ref).catch((error: unknown) => {
              // A name no emoji has now: the reaction may still be there under another type.
              if (error instanceof JsonableError) return undefined;
              throw error;
            })
          : undefined;
      const code = ref.emojiCode ?? named?.code;
      const type = ref.reactionType ?? named?.type ?? "unicode_emoji";
      const removed =
        code === undefined ? undefined : await deleteReaction(tx, messageId, user.id, code, type);
      if (removed === undefined) throw new JsonableError("Reaction doesn't exist.");
      emoji = {
        name: removed.emoji_name,
        code: removed.emoji_code,
        type: removed.reaction_type as ReactionType,
      };
    }
    await sendEvent(tx, audience, {
      type: "reaction",
      op,
      user_id: user.id,
      user: { user_id: user.id, email: user.email, full_name: user.full_name },
      message_id: messageId,
      emoji_name: emoji.name,
      emoji_code: emoji.code,
      reaction_type: emoji.type,
    });
  });
}
