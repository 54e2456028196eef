import type { Database } from "../db/database";
import { JsonableError } from "@repo/envelope";
import {
  type NarrowCondition,
  firstMessageSince,
  narrowedMessages,
} from "../db/queries/message-narrow";
import type { AuthedUser } from "../caches/auth";
import { MESSAGE_FLAGS, flagNames } from "../lib/message-flag-bits";
import { escapeHtml } from "../lib/render";
import type { NarrowTerm } from "../lib/narrow";
import { type ViewOptions, messageViews } from "./message-views";
import { narrowConditions } from "./narrow-conditions";

/** Where GET /messages starts reading. */
export type Anchor = "newest" | "oldest" | "first_unread" | { date: Date } | number;

/** What GET /messages asks for, parsed. */
export interface MessageQuery extends WindowQuery {
  view: ViewOptions;
  /** Most bytes of message text one answer carries (`CHAT_MAX_FETCH_MIB`). */
  maxBytes: number;
}

/** At most this many messages per GET /messages, as Zulip. */
export const MAX_MESSAGES_PER_FETCH = 5000;

/** The anchor Zulip answers when there is no message after it (`LARGER_THAN_MAX_MESSAGE_ID`). */
export const LARGER_THAN_MAX_MESSAGE_ID = 10_000_000_000_000_000;

/** The largest message id the id column holds; anchors past it match nothing newer. */
const MAX_STORED_ID = 2_147_483_647;

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
  // Each side nearest the anchor first; `rows` oldest first.
  const older = before.slice(0, query.numBefore);
  const newer = after.slice(0, afterLimit);
  return {
    anchor,
    foundAnchor,
    foundOldest: before.length <= query.numBefore,
    foundNewest: after.length <= afterLimit,
    older,
    newer,
    rows: [...older].reverse().concat(newer),
  };
}

/**
 * How many of each side's messages (nearest the anchor first) fit in
 * `maxBytes` of text, taken alternately from the newer and the older side
 * (the anchor first); at least one message.
 */
export function nearestWithin(
  older: readonly { bytes: number }[],
  newer: readonly { bytes: number }[],
  maxBytes: number,
): { older: number; newer: number } {
  let total = 0;
  let o = 0;
  let n = 0;
  while (o < older.length || n < newer.length) {
    const fromNewer = n < newer.length && (n <= o || o >= older.length);
    const next = fromNewer ? newer[n] : older[o];
    if (next === undefined) break;
    if (total + next.bytes > maxBytes && o + n > 0) break;
    total += next.bytes;
    if (fromNewer) n++;
    else o++;
  }
  return { older: o, newer: n };
}

/** How many of `rows`, from the first, fit in `maxBytes` of text; at least one. */
export function prefixWithin(rows: readonly { bytes: number }[], maxBytes: number): number {
  let total = 0;
  let count = 0;
  for (const row of rows) {
    if (total + row.bytes > maxBytes && count > 0) break;
    total += row.bytes;
    count++;
  }
  return count;
}

/** GET /messages: {@link messageWindow}'s messages as Zulip's message objects. */
export async function fetchMessages(db: Database, user: AuthedUser, query: MessageQuery) {
  const window = await messageWindow(db, user, query);
  // A window past the answer's byte budget stops short of it on each side: the
  // client reads the rest by a later fetch, as it does past num_before/num_after.
  const fit = nearestWithin(window.older, window.newer, query.maxBytes);
  const older = window.older.slice(0, fit.older);
  const newer = window.newer.slice(0, fit.newer);
  const rows = [...older.reverse(), ...newer];
  const views = await messageViews(
    db,
    rows.map((r) => r.message_id),
    query.view,
  );
  const flags = new Map(rows.map((r) => [r.message_id, r.flags]));
  return {
    anchor: window.anchor,
    found_anchor: window.foundAnchor,
    found_oldest: window.foundOldest && fit.older === window.older.length,
    found_newest: window.foundNewest && fit.newer === window.newer.length,
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
  maxBytes: number,
) {
  if (ids.length > MAX_MATCH_IDS)
    throw new JsonableError(`Too many messages requested (maximum ${MAX_MATCH_IDS}).`);
  const conditions = await narrowConditions(db, user, narrow);
  const matching = await narrowedMessages(
    db,
    user.id,
    [...conditions, { negated: false, kind: "ids", ids: [...new Set(ids)] }],
    { op: ">=", anchor: 0, limit: MAX_MATCH_IDS },
  );
  // Past the byte budget the newest are left out (the client takes them as not matching).
  const rows = matching.slice(0, prefixWithin(matching, maxBytes));
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
