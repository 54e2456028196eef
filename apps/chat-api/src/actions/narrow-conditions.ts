import { messagePlace } from "../db/queries/messages";
import { holdsMessage } from "../db/queries/user-messages";
import type { Database } from "../db/database";
import { JsonableError } from "@repo/envelope";
import type { NarrowCondition } from "../db/queries/message-narrow";
import type { AuthedUser } from "../caches/auth";
import { MENTION_FLAGS, MESSAGE_FLAGS } from "../lib/message-flag-bits";
import type { NarrowTerm } from "../lib/narrow";
import { accessChannelById, accessChannelByName } from "./channels";
import { findUsers } from "./user-lookup";

/**
 * A narrow's terms as conditions on a user's messages (GET /messages,
 * POST /messages/flags/narrow, matches_narrow): channels and people looked
 * up, visibility checked, `with` resolved to the conversation it names.
 */

/** The prefix of a resolved topic (Zulip's `RESOLVED_TOPIC_PREFIX`). */
export const RESOLVED_TOPIC_PREFIX = "\u2714 ";

/** `visibility_policy` of a followed topic. */
const FOLLOWED = 3;

const badOperand = (operator: string, operand: unknown) =>
  new JsonableError(`Invalid narrow operand for ${operator}: ${JSON.stringify(operand)}`);

/** The user ids an operand names: an id, a list of ids, or comma-separated ids and addresses. */
async function usersNamed(
  db: Database,
  user: AuthedUser,
  operator: string,
  operand: NarrowTerm["operand"],
): Promise<number[]> {
  const refs: (number | string)[] = Array.isArray(operand)
    ? operand
    : typeof operand === "number"
      ? [operand]
      : operand
          .split(",")
          .map((part) => part.trim())
          .filter((part) => part !== "")
          .map((part) => (/^\d{1,10}$/.test(part) ? Number(part) : part));
  if (refs.length === 0) throw badOperand(operator, operand);
  const found = await findUsers(db, user.realm_id, refs, () => {
    throw new JsonableError(`Invalid narrow operator: unknown user in ${JSON.stringify(operand)}`);
  });
  return found.map((u) => u.id);
}

/** One narrow term resolved to ids (channels and users looked up, visibility checked). */
async function condition(
  db: Database,
  user: AuthedUser,
  term: NarrowTerm,
): Promise<NarrowCondition | undefined> {
  const negated = term.negated === true;
  const { operand } = term;
  switch (term.operator) {
    case "channel":
    case "stream": {
      if (Array.isArray(operand)) throw badOperand(term.operator, operand);
      const channel =
        typeof operand === "number"
          ? await accessChannelById(db, user, operand)
          : await accessChannelByName(db, user, operand);
      return { negated, kind: "channel", channelId: channel.id };
    }
    case "channels":
    case "streams":
      if (operand !== "public") throw badOperand(term.operator, operand);
      return { negated, kind: "public-channels" };
    case "topic":
    case "subject":
      if (typeof operand !== "string") throw badOperand(term.operator, operand);
      return { negated, kind: "topic", topic: operand };
    case "sender":
    case "from": {
      if (operand === "me") return { negated, kind: "sender", userId: user.id };
      const [id, ...more] = await usersNamed(db, user, term.operator, operand);
      if (id === undefined || more.length > 0) throw badOperand(term.operator, operand);
      return { negated, kind: "sender", userId: id };
    }
    case "dm":
    case "pm-with": {
      const ids = await usersNamed(db, user, term.operator, operand);
      const members = [...new Set([...ids, user.id])].sort((a, b) => a - b);
      return { negated, kind: "conversation", dmKey: members.join(",") };
    }
    case "dm-including":
    case "group-pm-with": {
      const [id, ...more] = await usersNamed(db, user, term.operator, operand);
      if (id === undefined || more.length > 0) throw badOperand(term.operator, operand);
      return { negated, kind: "direct-including", userId: id };
    }
    case "is":
      switch (operand) {
        case "dm":
        case "private":
          return { negated, kind: "direct" };
        case "unread":
          return { negated, kind: "unread", read: MESSAGE_FLAGS.read };
        case "starred":
          return { negated, kind: "flag", bits: MESSAGE_FLAGS.starred };
        case "mentioned":
          return { negated, kind: "flag", bits: MENTION_FLAGS };
        case "alerted":
          return { negated, kind: "flag", bits: MESSAGE_FLAGS.has_alert_word };
        case "followed":
          return { negated, kind: "followed", policy: FOLLOWED };
        case "resolved":
          return { negated, kind: "resolved", prefix: RESOLVED_TOPIC_PREFIX };
        default:
          throw badOperand(term.operator, operand);
      }
    case "has":
      if (operand === "link" || operand === "image" || operand === "attachment")
        return { negated, kind: "has", what: operand };
      throw badOperand(term.operator, operand);
    case "search":
      if (typeof operand !== "string") throw badOperand(term.operator, operand);
      return operand.trim() === "" ? undefined : { negated, kind: "search", text: operand };
    case "id": {
      const id =
        typeof operand === "string" && /^\d{1,10}$/.test(operand) ? Number(operand) : operand;
      if (typeof id !== "number") throw badOperand(term.operator, operand);
      return { negated, kind: "id", id };
    }
    case "near":
      // Clients move the anchor to the message; the narrow itself is unchanged.
      if (
        typeof operand === "number" ||
        (typeof operand === "string" && /^\d{1,10}$/.test(operand))
      )
        return undefined;
      throw badOperand(term.operator, operand);
    default:
      throw new JsonableError(`Invalid narrow operator: ${term.operator}`);
  }
}

/** The operators that name a conversation, which `with` replaces. */
const CONVERSATION_OPERATORS = new Set(["channel", "stream", "topic", "subject", "dm", "pm-with"]);

/**
 * The conversation message `messageId` is in now, as narrow terms, when
 * `user` may read it (theirs, or in a channel whose history they may read);
 * undefined else.
 */
async function conversationOf(
  db: Database,
  user: AuthedUser,
  messageId: number,
): Promise<NarrowTerm[] | undefined> {
  const message = await messagePlace(db, messageId);
  if (message === null || message.realm_id !== user.realm_id) return undefined;
  const held = await holdsMessage(db, user.id, messageId);
  if (message.channel_id === null) {
    if (!held || message.dm_key === null) return undefined;
    return [{ operator: "dm", operand: message.dm_key.split(",").map(Number) }];
  }
  if (!held) {
    const channel = await accessChannelById(db, user, message.channel_id).catch(() => undefined);
    if (channel === undefined || (channel.invite_only && !channel.history_public_to_subscribers))
      return undefined;
  }
  return [
    { operator: "channel", operand: message.channel_id },
    { operator: "topic", operand: message.topic },
  ];
}

/**
 * A narrow with its `with` term resolved (Zulip's, feature level 271): the
 * conversation the message is in now, whichever channel or topic the narrow
 * names (the message may have moved); without it when the message cannot
 * be read.
 */
async function resolveWith(
  db: Database,
  user: AuthedUser,
  narrow: readonly NarrowTerm[],
): Promise<readonly NarrowTerm[]> {
  const withTerms = narrow.filter((term) => term.operator === "with");
  if (withTerms.length === 0) return narrow;
  if (withTerms.length > 1) throw new JsonableError("Duplicate 'with' operators.");
  const [term] = withTerms;
  const rest = narrow.filter((t) => t.operator !== "with");
  const operand = term?.operand;
  const id =
    typeof operand === "number"
      ? operand
      : typeof operand === "string" && /^\d{1,10}$/.test(operand)
        ? Number(operand)
        : undefined;
  if (id === undefined || id > 2_147_483_647) throw badOperand("with", operand);
  const conversation = await conversationOf(db, user, id);
  if (conversation === undefined) return rest;
  return [
    ...rest.filter((t) => t.negated === true || !CONVERSATION_OPERATORS.has(t.operator)),
    ...conversation,
  ];
}

/** A narrow's terms resolved to conditions on the user's messages. */
export async function narrowConditions(
  db: Database,
  user: AuthedUser,
  given: readonly NarrowTerm[],
): Promise<NarrowCondition[]> {
  const narrow = await resolveWith(db, user, given);
  const conditions: NarrowCondition[] = [];
  for (const term of narrow) {
    const resolved = await condition(db, user, term);
    if (resolved !== undefined) conditions.push(resolved);
  }
  return conditions;
}
