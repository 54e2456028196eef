import type { Database } from "../db/database";
import { JsonableError } from "@repo/envelope";
import type { Prisma } from "../gen/prisma/client";
import { markReadBatch } from "../db/queries/messages";
import { sendEvent } from "../events/queue";
import type { AuthedUser } from "../lib/auth";
import { accessChannelById, accessChannelByName } from "./channels";
import { READ, type ViewOptions, messageViews } from "./messages";

/** One narrow term, as Zulip clients send them. */
export interface NarrowTerm {
  operator: string;
  operand: string | number | number[];
  negated?: boolean;
}

/** What GET /messages asks for, parsed. */
export interface MessageQuery {
  anchor: "newest" | "oldest" | "first_unread" | number;
  numBefore: number;
  numAfter: number;
  includeAnchor: boolean;
  narrow: readonly NarrowTerm[];
  view: ViewOptions;
}

/** At most this many messages per GET /messages, as Zulip. */
export const MAX_MESSAGES_PER_FETCH = 5000;

/** The `user_messages` filter of a narrow (channel, topic, sender, direct messages, unread). */
async function narrowFilter(
  db: Database,
  user: AuthedUser,
  narrow: readonly NarrowTerm[],
): Promise<Prisma.UserMessageWhereInput[]> {
  const filters: Prisma.UserMessageWhereInput[] = [];
  for (const term of narrow) {
    let filter: Prisma.UserMessageWhereInput;
    const operand = term.operand;
    switch (term.operator) {
      case "channel":
      case "stream": {
        const channel =
          typeof operand === "number"
            ? await accessChannelById(db, user, operand)
            : await accessChannelByName(db, user, String(operand));
        filter = { message: { channel_id: channel.id } };
        break;
      }
      case "topic":
        filter = { message: { topic: { equals: String(operand), mode: "insensitive" } } };
        break;
      case "sender":
        filter = {
          message:
            typeof operand === "number"
              ? { sender_id: operand }
              : { sender: { email: { equals: String(operand), mode: "insensitive" } } },
        };
        break;
      case "is":
        if (operand === "unread") filter = { flags: { equals: 0n } };
        else if (operand === "dm" || operand === "private")
          filter = { message: { channel_id: null } };
        else throw new JsonableError(`Invalid narrow operand: ${String(operand)}`);
        break;
      case "dm":
      case "pm-with": {
        const ids = Array.isArray(operand) ? operand : [];
        filter = {
          message: { dm_key: [...new Set([...ids, user.id])].sort((a, b) => a - b).join(",") },
        };
        break;
      }
      default:
        throw new JsonableError(`Invalid narrow operator: ${term.operator}`);
    }
    filters.push(term.negated === true ? { NOT: filter } : filter);
  }
  return filters;
}

/**
 * GET /messages: the caller's messages matching the narrow around the
 * anchor (`num_before` older, `num_after` newer, the anchor itself unless
 * excluded), each with the caller's flags; and whether the ends were reached.
 */
export async function fetchMessages(db: Database, user: AuthedUser, query: MessageQuery) {
  if (query.numBefore + query.numAfter > MAX_MESSAGES_PER_FETCH)
    throw new JsonableError(`Too many messages requested (maximum ${MAX_MESSAGES_PER_FETCH}).`);
  const filters = await narrowFilter(db, user, query.narrow);
  const where = (extra: Prisma.UserMessageWhereInput): Prisma.UserMessageWhereInput => ({
    AND: [{ user_id: user.id }, ...filters, extra],
  });
  let anchor: number;
  if (query.anchor === "newest") anchor = 2_147_483_647;
  else if (query.anchor === "oldest") anchor = 0;
  else if (query.anchor === "first_unread") {
    const first = await db.prisma.userMessage.findFirst({
      where: where({ flags: { equals: 0n } }),
      orderBy: { message_id: "asc" },
    });
    anchor = first?.message_id ?? 2_147_483_647;
  } else anchor = query.anchor;
  const [before, after] = await Promise.all([
    db.prisma.userMessage.findMany({
      where: where({ message_id: { lt: anchor } }),
      orderBy: { message_id: "desc" },
      take: query.numBefore + 1,
    }),
    db.prisma.userMessage.findMany({
      where: where({ message_id: query.includeAnchor ? { gte: anchor } : { gt: anchor } }),
      orderBy: { message_id: "asc" },
      take: query.numAfter + 1 + (query.includeAnchor ? 1 : 0),
    }),
  ]);
  const foundAnchor = after[0]?.message_id === anchor && query.includeAnchor;
  const afterLimit = query.numAfter + (foundAnchor ? 1 : 0);
  const older = before.slice(0, query.numBefore).reverse();
  const newer = after.slice(0, afterLimit);
  const rows = [...older, ...newer];
  const views = await messageViews(
    db,
    rows.map((r) => r.message_id),
    query.view,
  );
  const flags = new Map(rows.map((r) => [r.message_id, r.flags]));
  return {
    anchor,
    found_anchor: foundAnchor,
    found_oldest: before.length <= query.numBefore,
    found_newest: after.length <= afterLimit,
    history_limited: false,
    messages: views.map((view) => ({
      ...view,
      flags: ((flags.get(view.id) ?? 0n) & READ) === READ ? ["read"] : [],
    })),
  };
}

/** Messages marked read per transaction by mark_all_as_read. */
export const MARK_READ_BATCH = 1000;

/**
 * POST /mark_all_as_read: marks the caller's unread messages read in batches,
 * newest first, each batch its own transaction with its
 * `update_message_flags` event, until none is left (`true`) or the time
 * budget has run out after a batch (`false`; a repeat continues). At least one
 * batch always runs, so every call makes progress; no message is skipped,
 * since each batch takes the newest unread ones left.
 */
export async function doMarkAllAsRead(
  db: Database,
  user: AuthedUser,
  budgetMs: number,
  batchSize = MARK_READ_BATCH,
): Promise<boolean> {
  const deadline = Date.now() + budgetMs;
  for (;;) {
    const marked = await db.transaction(async (tx) => {
      const ids = await markReadBatch(tx, READ, user.id, batchSize);
      if (ids.length > 0) {
        await sendEvent(tx, [user.id], {
          type: "update_message_flags",
          op: "add",
          operation: "add",
          flag: "read",
          messages: ids.sort((a, b) => a - b),
          all: false,
        });
      }
      return ids.length;
    });
    if (marked < batchSize) return true;
    if (Date.now() >= deadline) return false;
  }
}
