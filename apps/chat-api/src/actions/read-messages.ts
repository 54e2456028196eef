import type { Database } from "../db/database";
import { JsonableError } from "@repo/envelope";
import {
  type NarrowCondition,
  firstMessageSince,
  narrowedMessages,
} from "../db/queries/message-narrow";
import type { AuthedUser } from "../lib/auth";
import { MENTION_FLAGS, MESSAGE_FLAGS, flagNames } from "../lib/message-flags";
import { escapeHtml } from "../lib/render";
import type { NarrowTerm } from "../lib/narrow";
import { accessChannelById, accessChannelByName } from "./channels";
import { type ViewOptions, messageViews } from "./message-views";
import { findUsers } from "./user-lookup";

/** Where GET /messages starts reading. */
export type Anchor = "newest" | "oldest" | "first_unread" | { date: Date } | number;

/** What GET /messages asks for, parsed. */
export interface MessageQuery extends WindowQuery {
  view: ViewOptions;
}

/** At most this many messages per GET /messages, as Zulip. */
export const MAX_MESSAGES_PER_FETCH = 5000;

/** The anchor Zulip answers when there is no message after it (`LARGER_THAN_MAX_MESSAGE_ID`). */
export const LARGER_THAN_MAX_MESSAGE_ID = 10_000_000_000_000_000;

/** The largest message id the id column holds; anchors past it match nothing newer. */
const MAX_STORED_ID = 2_147_483_647;

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
  const message = await db.prisma.message.findUnique({
    where: { id: messageId },
    select: { realm_id: true, channel_id: true, topic: true, dm_key: true },
  });
  if (message === null || message.realm_id !== user.realm_id) return undefined;
  const held =
    (await db.prisma.userMessage.count({
      where: { user_id: user.id, message_id: messageId },
    })) > 0;
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

/** An `anchor` parameter (with `anchor_date` for `date`), or Zulip's errors. */
export function parseAnchor(raw: string, date: Date | undefined): Anchor {
  if (raw === "newest" || raw === "oldest" || raw === "first_unread") return raw;
  if (raw === "date") {
    if (date === undefined) throw new JsonableError("Missing 'anchor_date' argument");
    return { date };
  }
  if (/^\d{1,17}$/.test(raw) && BigInt(raw) <= BigInt(LARGER_THAN_MAX_MESSAGE_ID))
    return Number(raw);
  throw new JsonableError("Invalid anchor");
}

/** The message id an anchor stands for in the narrow. */
async function anchorId(
  db: Database,
  user: AuthedUser,
  conditions: readonly NarrowCondition[],
  anchor: Anchor,
): Promise<number> {
  if (anchor === "newest") return LARGER_THAN_MAX_MESSAGE_ID;
  if (anchor === "oldest") return 0;
  if (anchor === "first_unread") {
    const [first] = await narrowedMessages(
      db,
      user.id,
      [...conditions, { negated: false, kind: "unread", read: MESSAGE_FLAGS.read }],
      { op: ">=", anchor: 0, limit: 1 },
    );
    return first?.message_id ?? LARGER_THAN_MAX_MESSAGE_ID;
  }
  if (typeof anchor === "number") return anchor;
  return (
    (await firstMessageSince(db, user.id, conditions, anchor.date)) ?? LARGER_THAN_MAX_MESSAGE_ID
  );
}

/** Where a window of messages starts and how far it reaches (GET /messages' parameters). */
export interface WindowQuery {
  anchor: Anchor;
  numBefore: number;
  numAfter: number;
  includeAnchor: boolean;
  narrow: readonly NarrowTerm[];
}

/**
 * The caller's messages matching the narrow around the anchor (`num_before`
 * older, `num_after` newer, the anchor itself unless excluded), oldest first,
 * with the caller's flags; and whether the ends were reached.
 */
export async function messageWindow(db: Database, user: AuthedUser, query: WindowQuery) {
  if (query.numBefore + query.numAfter > MAX_MESSAGES_PER_FETCH)
    throw new JsonableError(`Too many messages requested (maximum ${MAX_MESSAGES_PER_FETCH}).`);
  const conditions = await narrowConditions(db, user, query.narrow);
  const anchor = await anchorId(db, user, conditions, query.anchor);
  // Anchors past the id column's range: everything is older, nothing newer.
  const past = anchor > MAX_STORED_ID;
  const [before, after] = await Promise.all([
    narrowedMessages(db, user.id, conditions, {
      op: past ? "<=" : "<",
      anchor: past ? MAX_STORED_ID : anchor,
      limit: query.numBefore + 1,
    }),
    past
      ? Promise.resolve([])
      : narrowedMessages(db, user.id, conditions, {
          op: query.includeAnchor ? ">=" : ">",
          anchor,
          limit: query.numAfter + 1 + (query.includeAnchor ? 1 : 0),
        }),
  ]);
  const foundAnchor = query.includeAnchor && after[0]?.message_id === anchor;
  const afterLimit = query.numAfter + (foundAnchor ? 1 : 0);
  return {
    anchor,
    foundAnchor,
    foundOldest: before.length <= query.numBefore,
    foundNewest: after.length <= afterLimit,
    rows: [...before.slice(0, query.numBefore).reverse(), ...after.slice(0, afterLimit)],
  };
}

/** GET /messages: {@link messageWindow}'s messages as Zulip's message objects. */
export async function fetchMessages(db: Database, user: AuthedUser, query: MessageQuery) {
  const window = await messageWindow(db, user, query);
  const views = await messageViews(
    db,
    window.rows.map((r) => r.message_id),
    query.view,
  );
  const flags = new Map(window.rows.map((r) => [r.message_id, r.flags]));
  return {
    anchor: window.anchor,
    found_anchor: window.foundAnchor,
    found_oldest: window.foundOldest,
    found_newest: window.foundNewest,
    history_limited: false,
    messages: views.map((view) => ({ ...view, flags: flagNames(flags.get(view.id) ?? 0n) })),
  };
}

/**
 * GET /messages/{message_id}: one of the caller's messages with their flags
 * and its source (`raw_content`); `Invalid message(s)` for any other id.
 */
export async function fetchMessage(
  db: Database,
  user: AuthedUser,
  messageId: number,
  view: ViewOptions,
) {
  const [row] = await narrowedMessages(
    db,
    user.id,
    [{ negated: false, kind: "id", id: messageId }],
    { op: ">=", anchor: 0, limit: 1 },
  );
  if (row === undefined) throw new JsonableError("Invalid message(s)");
  const [message] = await messageViews(db, [messageId], view);
  const [source] = await messageViews(db, [messageId], { ...view, applyMarkdown: false });
  if (message === undefined || source === undefined) throw new JsonableError("Invalid message(s)");
  return { raw_content: source.content, message: { ...message, flags: flagNames(row.flags) } };
}

/** Most message ids one GET /messages/matches_narrow may ask about. */
export const MAX_MATCH_IDS = 1000;

/**
 * GET /messages/matches_narrow: which of the caller's messages `ids` match
 * the narrow, each with its content and topic as the client shows them
 * (others' messages and unknown ids are left out, as non-matching).
 */
export async function matchesNarrow(
  db: Database,
  user: AuthedUser,
  ids: readonly number[],
  narrow: readonly NarrowTerm[],
  view: ViewOptions,
) {
  if (ids.length > MAX_MATCH_IDS)
    throw new JsonableError(`Too many messages requested (maximum ${MAX_MATCH_IDS}).`);
  const conditions = await narrowConditions(db, user, narrow);
  const rows = await narrowedMessages(
    db,
    user.id,
    [...conditions, { negated: false, kind: "ids", ids: [...new Set(ids)] }],
    { op: ">=", anchor: 0, limit: MAX_MATCH_IDS },
  );
  const views = await messageViews(
    db,
    rows.map((r) => r.message_id),
    view,
  );
  return {
    messages: Object.fromEntries(
      views.map((m) => [
        String(m.id),
        { match_content: m.content, match_subject: escapeHtml(m.subject) },
      ]),
    ),
  };
}
