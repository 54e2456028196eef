import type { Tx } from "../db/kysely";
import type { Database } from "../db/database";
import { JsonableError } from "@repo/envelope";
import { sendEvent } from "../events/queue";
import type { AuthedUser } from "../lib/auth";
import { isUnicodeEmoji, isUnicodeEmojiCode, unicodeEmojiCode } from "../lib/emoji";
import { checkCap } from "./caps";
import { lockUser } from "../db/queries/users";
import { activeHolders } from "../db/queries/user-messages";

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
 * The emoji a request names, checked as Zulip checks it: a unicode emoji by
 * name (its code looked up) or by code with one of its names; Zulip's own
 * `zulip` emoji. This server has no custom (realm) emoji.
 */
export function resolveEmoji(ref: EmojiRef): { name: string; code: string; type: ReactionType } {
  const type = ref.reactionType ?? "unicode_emoji";
  const name = ref.emojiName;
  if (type === "zulip_extra_emoji") {
    if ((name ?? "zulip") !== "zulip" || (ref.emojiCode ?? "zulip") !== "zulip")
      throw new JsonableError("Invalid emoji name.");
    return { name: "zulip", code: "zulip", type };
  }
  if (type === "realm_emoji") throw missingEmoji(name ?? ref.emojiCode ?? "");
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
      emoji = resolveEmoji(ref);
      // One reaction change at a time per user: the duplicate check and the cap hold.
      await lockUser(tx, user.id);
      const mine = await tx.prisma.reaction.findMany({
        where: { message_id: messageId, user_id: user.id },
        select: { emoji_code: true, reaction_type: true },
      });
      if (mine.some((r) => r.emoji_code === emoji.code && r.reaction_type === emoji.type))
        throw new JsonableError("Reaction already exists.");
      checkCap(mine.length, 1, MAX_REACTIONS_PER_USER_MESSAGE, "reactions on this message");
      await tx.prisma.reaction.create({
        data: {
          message_id: messageId,
          user_id: user.id,
          emoji_name: emoji.name,
          emoji_code: emoji.code,
          reaction_type: emoji.type,
        },
      });
    } else {
      const code =
        ref.emojiCode ??
        (ref.emojiName === undefined ? undefined : unicodeEmojiCode(ref.emojiName)) ??
        (ref.emojiName === "zulip" ? "zulip" : undefined);
      const type = ref.reactionType ?? (code === "zulip" ? "zulip_extra_emoji" : "unicode_emoji");
      const removed =
        code === undefined
          ? null
          : await tx.prisma.reaction.findFirst({
              where: {
                message_id: messageId,
                user_id: user.id,
                emoji_code: code,
                reaction_type: type,
              },
            });
      if (removed === null) throw new JsonableError("Reaction doesn't exist.");
      await tx.prisma.reaction.delete({ where: { id: removed.id } });
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
