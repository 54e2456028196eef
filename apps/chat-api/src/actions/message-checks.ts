import type { Tx } from "../db/kysely";
import { JsonableError } from "@repo/envelope";
import type { AuthedUser } from "../caches/auth";
import { codePoints } from "../lib/text";
import { MAX_TOPIC_LENGTH } from "./channel-settings";
import { findUsers } from "./user-lookup";

/**
 * The checks of a message's parts before it is built (POST /messages, edits,
 * scheduled messages): its content, its topic, a client's local id, a direct
 * message's recipients, with Zulip's messages.
 */

/** `max_message_length`: longer content is cut, as Zulip does. */
export const MAX_MESSAGE_LENGTH = 10_000;

/** Message content as stored: trailing whitespace dropped, not empty, no NUL, cut at the limit. */
export function checkContent(content: string): string {
  if (content.includes("\u0000")) throw new JsonableError("Message must not contain null bytes");
  const trimmed = content.trimEnd();
  if (trimmed.trim() === "") throw new JsonableError("Message must not be empty");
  if (codePoints(trimmed) <= MAX_MESSAGE_LENGTH) return trimmed;
  const marker = "\n[message truncated]";
  return Array.from(trimmed)
    .slice(0, MAX_MESSAGE_LENGTH - marker.length)
    .join("")
    .concat(marker);
}

/** A topic as stored: no NUL, trimmed, cut to `max_topic_length`. */
export function checkTopic(topic: string): string {
  if (topic.includes("\u0000")) throw new JsonableError("Topic must not contain null bytes");
  return Array.from(topic.trim()).slice(0, MAX_TOPIC_LENGTH).join("");
}

/** Longest `local_id` a sender may give (Zulip's clients send a decimal like `1234.01`). */
export const MAX_LOCAL_ID_LENGTH = 64;

/** A direct message's recipients checked: users of the realm, all active; answers their ids. */
export async function checkDirectRecipients(
  tx: Tx,
  user: AuthedUser,
  to: readonly (number | string)[],
): Promise<number[]> {
  if (to.length === 0) throw new JsonableError("Message must have recipients");
  const found = await findUsers(tx, user.realm_id, to, (recipient) => {
    throw new JsonableError(
      typeof recipient === "number"
        ? `Invalid user ID ${String(recipient)}`
        : `Invalid email '${recipient}'`,
    );
  });
  const inactive = found.find((recipient) => !recipient.is_active);
  if (inactive !== undefined)
    throw new JsonableError(`'${inactive.email}' is no longer using Zulip.`);
  return found.map((recipient) => recipient.id);
}
