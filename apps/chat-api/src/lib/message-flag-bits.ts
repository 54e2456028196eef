/**
 * The bits of `user_messages.flags`, numbered as Zulip numbers them
 * (`UserMessage.flags` in its models), and their names on the wire.
 */
export const MESSAGE_FLAGS = {
  read: 1n,
  starred: 2n,
  collapsed: 4n,
  mentioned: 8n,
  wildcard_mentioned: 16n,
  has_alert_word: 512n,
  historical: 1024n,
} as const;

/** A flag's name on the wire. */
export type MessageFlag = keyof typeof MESSAGE_FLAGS;

/** Flags a message's content sets (mentions, alert words): recomputed when it is edited. */
export const CONTENT_FLAGS =
  MESSAGE_FLAGS.mentioned | MESSAGE_FLAGS.wildcard_mentioned | MESSAGE_FLAGS.has_alert_word;

/** Flags that mark a message as mentioning the user (`is:mentioned`, `unread_msgs.mentions`). */
export const MENTION_FLAGS = MESSAGE_FLAGS.mentioned | MESSAGE_FLAGS.wildcard_mentioned;

/** The names of the flags set in `bits`, in Zulip's order. */
export function flagNames(bits: bigint): MessageFlag[] {
  return (Object.keys(MESSAGE_FLAGS) as MessageFlag[]).filter(
    (name) => (bits & MESSAGE_FLAGS[name]) !== 0n,
  );
}

/**
 * Users grouped by the flags they hold, for events that tell each user their
 * own flags (`message`, `update_message`): one event per distinct set, most
 * users sharing one. In the order the sets are first met.
 */
export function usersByFlags(
  holders: Iterable<{ userId: number; flags: bigint }>,
): { flags: MessageFlag[]; userIds: number[] }[] {
  const groups = new Map<bigint, number[]>();
  for (const { userId, flags } of holders) {
    const same = groups.get(flags);
    if (same === undefined) groups.set(flags, [userId]);
    else same.push(userId);
  }
  return [...groups].map(([bits, userIds]) => ({ flags: flagNames(bits), userIds }));
}
