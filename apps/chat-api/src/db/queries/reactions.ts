import type { Tx } from "../kysely";

/** User `userId`'s reactions on message `messageId`: which emoji. */
export function reactionsOfUser(tx: Tx, messageId: number, userId: number) {
  return tx.prisma.reaction.findMany({
    where: { message_id: messageId, user_id: userId },
    select: { emoji_code: true, reaction_type: true },
  });
}

/** A reaction's emoji. */
export interface ReactionEmoji {
  emoji_name: string;
  emoji_code: string;
  reaction_type: string;
}

/** Stores user `userId`'s reaction on message `messageId`. */
export async function insertReaction(
  tx: Tx,
  messageId: number,
  userId: number,
  emoji: ReactionEmoji,
): Promise<void> {
  await tx.prisma.reaction.create({ data: { message_id: messageId, user_id: userId, ...emoji } });
}

/**
 * Deletes user `userId`'s reaction with emoji `code` of `type` on message
 * `messageId`; answers its emoji, or undefined if there was none.
 */
export async function deleteReaction(
  tx: Tx,
  messageId: number,
  userId: number,
  code: string,
  type: string,
): Promise<ReactionEmoji | undefined> {
  const found = await tx.prisma.reaction.findFirst({
    where: { message_id: messageId, user_id: userId, emoji_code: code, reaction_type: type },
  });
  if (found === null) return undefined;
  await tx.prisma.reaction.delete({ where: { id: found.id } });
  return found;
}
