/**
 * Zulip's message objects: what a message row shows a client (without
 * per-user flags), for history reads and for a new message's event.
 */
import type { Tx } from "../db/kysely";
import type { Message } from "../gen/prisma/client";
import {
  type ReactionView,
  type SubmessageView,
  messagePeople,
  messageRows,
} from "../db/queries/messages";
import { type EditSummaryEntry } from "../db/queries/message-edits";
import { gravatarUrl } from "./user-view";

/** A message as its message object shows it (a row of {@link messageRows}). */
export type MessageRow = Pick<
  Message,
  | "id"
  | "sender_id"
  | "channel_id"
  | "topic"
  | "dm_key"
  | "content"
  | "rendered_content"
  | "date_sent"
  | "last_edit_time"
> & {
  sender_email: string;
  sender_full_name: string;
  sender_delivery_email: string;
  realm_subdomain: string;
  /** Null for a direct message. */
  channel_name: string | null;
  reactions: readonly ReactionView[];
  submessages: readonly SubmessageView[];
  /** The newest edits, newest first, without content; null when never edited or moved. */
  edit_summary: readonly EditSummaryEntry[] | null;
};

/** Rendering options of message objects. */
export interface ViewOptions {
  clientGravatar: boolean;
  applyMarkdown: boolean;
}

/** Zulip's message objects for `ids` (in id order), without per-user flags. */
export async function messageViews(tx: Tx, ids: readonly number[], options: ViewOptions) {
  const rows: MessageRow[] = await messageRows(tx, ids);
  const people = await dmPeople(tx, rows);
  return rows.map((row) => messageView(row, people, options));
}

/** The people of the direct messages among `rows`, by id (for `display_recipient`). */
export async function dmPeople(
  tx: Tx,
  rows: readonly Pick<Message, "dm_key">[],
): Promise<Map<number, { id: number; email: string; full_name: string }>> {
  const ids = [
    ...new Set(rows.flatMap((r) => (r.dm_key === null ? [] : r.dm_key.split(",").map(Number)))),
  ];
  if (ids.length === 0) return new Map();
  const people = await messagePeople(tx, ids);
  return new Map(people.map((u) => [u.id, u]));
}

/** Zulip's message object of `row`, without per-user flags. */
export function messageView(
  row: MessageRow,
  dmUsers: ReadonlyMap<number, { id: number; email: string; full_name: string }>,
  options: ViewOptions,
) {
  return {
    id: row.id,
    sender_id: row.sender_id,
    sender_email: row.sender_email,
    sender_full_name: row.sender_full_name,
    sender_realm_str: row.realm_subdomain,
    avatar_url: options.clientGravatar ? null : gravatarUrl(row.sender_delivery_email),
    client: "website",
    content: options.applyMarkdown ? row.rendered_content : row.content,
    content_type: options.applyMarkdown ? "text/html" : "text/x-markdown",
    is_me_message: false,
    reactions: row.reactions.map((r) => ({
      emoji_name: r.emoji_name,
      emoji_code: r.emoji_code,
      reaction_type: r.reaction_type,
      user_id: r.user_id,
    })),
    submessages: row.submessages,
    topic_links: [],
    timestamp: Math.floor(row.date_sent.getTime() / 1000),
    ...(row.last_edit_time === null
      ? {}
      : { last_edit_timestamp: Math.floor(row.last_edit_time.getTime() / 1000) }),
    ...(row.edit_summary === null || row.edit_summary.length === 0
      ? {}
      : { edit_history: row.edit_summary }),
    ...(row.channel_id === null
      ? {
          type: "private",
          subject: "",
          display_recipient: (row.dm_key ?? "").split(",").flatMap((id) => {
            const user = dmUsers.get(Number(id));
            return user === undefined
              ? []
              : [
                  {
                    id: user.id,
                    email: user.email,
                    full_name: user.full_name,
                    is_mirror_dummy: false,
                  },
                ];
          }),
        }
      : {
          type: "stream",
          stream_id: row.channel_id,
          subject: row.topic,
          display_recipient: row.channel_name ?? "",
        }),
  };
}
