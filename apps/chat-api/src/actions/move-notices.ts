import { notificationBot } from "../db/queries/bots";
import type { Tx } from "../db/kysely";
import { receivedInTopic } from "../db/queries/user-messages";
import type { Channel } from "../gen/prisma/client";
import type { AuthedUser } from "../caches/auth";
import { channelSlug, hashEncode } from "../lib/markdown/html";
import { sendBotMessage } from "./message-send";
import { RESOLVED_TOPIC_PREFIX } from "./narrow-conditions";

/** Which messages a topic change takes along (Zulip's `propagate_mode`). */
export type PropagateMode = "change_one" | "change_later" | "change_all";

/** What an edit says of its move's notices (a `MessageEdit` has these). */
export interface MoveNoticeChoice {
  /** Whether the notification bot tells the old and the new topic of a move. */
  notifyOldThread: boolean;
  notifyNewThread: boolean;
  /** The realm's URL, for the link to a moved message in a notice. */
  realmUrl: string;
}

/** Where a move takes messages from and to. */
export interface Move {
  from: { channel: Channel; topic: string };
  to: { channel: Channel; topic: string };
  ids: number[];
  mode: PropagateMode;
}

/** Whether the move is Zulip's resolve (`✔ topic`) or unresolve convention, in place. */
function resolution(move: Move): "resolved" | "unresolved" | undefined {
  if (move.from.channel.id !== move.to.channel.id) return undefined;
  const [from, to] = [move.from.topic, move.to.topic];
  if (!from.startsWith(RESOLVED_TOPIC_PREFIX) && to === RESOLVED_TOPIC_PREFIX + from)
    return "resolved";
  if (from.startsWith(RESOLVED_TOPIC_PREFIX) && from.slice(RESOLVED_TOPIC_PREFIX.length) === to)
    return "unresolved";
  return undefined;
}

/**
 * The notification bot's notices of a move (Zulip's wording): in the new
 * topic, where the messages came from (unless `notifyNewThread` is off, or
 * the move only resolves or unresolves the topic, which gets its own
 * notice); in the old one, where they went, when `notifyOldThread`.
 */
export async function sendMoveNotices(
  tx: Tx,
  user: AuthedUser,
  move: Move,
  edit: MoveNoticeChoice,
  firstId: number,
): Promise<void> {
  const bot = await notificationBot(tx, user.realm_id);
  if (bot === null) return;
  const who = `@_**${user.full_name}|${String(user.id)}**`;
  const link = (place: { channel: Channel; topic: string }) =>
    `#**${place.channel.name}>${place.topic}**`;
  const count = move.ids.length;
  // Whether the caller moved every message of the topic they can see.
  const all =
    move.mode === "change_all" ||
    (await receivedInTopic(tx, user.id, move.from.channel.id, move.from.topic)) === 0;
  const post = (place: { channel: Channel; topic: string }, text: string) =>
    sendBotMessage(tx, bot, { kind: "channel", ...place }, text);
  const resolved = resolution(move);
  if (resolved !== undefined) {
    await post(move.to, `${who} has marked this topic as ${resolved}.`);
  } else if (edit.notifyNewThread) {
    const before = await receivedInTopic(tx, user.id, move.to.channel.id, move.to.topic, move.ids);
    const messageUrl = `${edit.realmUrl}/#narrow/channel/${channelSlug(move.to.channel)}/topic/${hashEncode(move.to.topic)}/near/${String(firstId)}`;
    await post(
      move.to,
      before === 0 && all
        ? `This topic was moved here from ${link(move.from)} by ${who}.`
        : count === 1
          ? `[A message](${messageUrl}) was moved here from ${link(move.from)} by ${who}.`
          : `${String(count)} messages were moved here from ${link(move.from)} by ${who}.`,
    );
  }
  if (edit.notifyOldThread)
    await post(
      move.from,
      all
        ? `This topic was moved to ${link(move.to)} by ${who}.`
        : count === 1
          ? `A message was moved from this topic to ${link(move.to)} by ${who}.`
          : `${String(count)} messages were moved from this topic to ${link(move.to)} by ${who}.`,
    );
}
