import type { Database } from "../db/database";
import { JsonableError } from "@repo/envelope";
import { channelSubscriberIds } from "../db/queries/subscriptions";
import { sendEvent } from "../realtime/queue";
import type { AuthedUser } from "../caches/auth";
import { accessChannelById } from "./channels";
import { findUsers } from "./user-lookup";
import { accessMessage } from "./message-edit";
import { activeHolders } from "../db/queries/user-messages";

/** Where someone is typing: to some people, or in a channel's topic. */
export type TypingPlace =
  | { kind: "direct"; to: readonly (number | string)[] }
  | { kind: "channel"; channelId: number; topic: string };

/**
 * The largest conversation that hears typing: a channel of more subscribers
 * (Zulip's `MAX_STREAM_SIZE_FOR_TYPING_NOTIFICATIONS`), or a direct
 * conversation of more people, gets no typing events. One keystroke would
 * otherwise be thousands of deliveries.
 */
export const MAX_TYPING_AUDIENCE = 100;

/**
 * POST /typing: tells the others of a conversation that the caller started
 * or stopped typing (`typing` events; nothing is stored). A direct
 * conversation's people all hear it, the caller included, as Zulip sends
 * it; in a channel, its other active subscribers. A conversation larger than
 * {@link MAX_TYPING_AUDIENCE} hears nothing (the request still succeeds).
 */
export async function doSendTyping(
  db: Database,
  user: AuthedUser,
  place: TypingPlace,
  op: "start" | "stop",
): Promise<void> {
  const sender = { user_id: user.id, email: user.email };
  if (place.kind === "direct") {
    if (place.to.length === 0) throw new JsonableError("Empty 'to' list");
    const people = await findUsers(db, user.realm_id, place.to, () => {
      throw new JsonableError("Invalid user ID");
    });
    const everyone = [
      ...new Map(
        [...people, { id: user.id, email: user.email, is_active: true }].map((p) => [p.id, p]),
      ).values(),
    ].sort((a, b) => a.id - b.id);
    if (everyone.length > MAX_TYPING_AUDIENCE) return;
    await db.transaction((tx) =>
      sendEvent(
        tx,
        everyone.filter((p) => p.is_active).map((p) => p.id),
        {
          type: "typing",
          op,
          message_type: "direct",
          sender,
          recipients: everyone.map((p) => ({ user_id: p.id, email: p.email })),
        },
      ),
    );
    return;
  }
  const channel = await accessChannelById(db, user, place.channelId);
  await db.transaction(async (tx) => {
    const subscribers = await channelSubscriberIds(tx, channel.id, MAX_TYPING_AUDIENCE + 1);
    if (subscribers.length > MAX_TYPING_AUDIENCE) return;
    const audience = subscribers.filter((id) => id !== user.id);
    await sendEvent(tx, audience, {
      type: "typing",
      op,
      message_type: "stream",
      sender,
      stream_id: channel.id,
      topic: place.topic,
    });
  });
}

/**
 * POST /messages/{message_id}/typing (feature level 351): tells the others of
 * a message's conversation that the caller started or stopped editing it
 * (`typing_edit_message` events; nothing is stored). Only its sender edits
 * its content, so only its sender's notices go out; the audience and its cap
 * are those of {@link doSendTyping}.
 */
export async function doSendEditTyping(
  db: Database,
  user: AuthedUser,
  messageId: number,
  op: "start" | "stop",
): Promise<void> {
  const message = await accessMessage(db, user, messageId);
  if (message.sender_id !== user.id)
    throw new JsonableError("You don't have permission to edit this message");
  await db.transaction(async (tx) => {
    if (message.channel === null) {
      const people = (await activeHolders(tx, [message.id])).map((h) => h.user_id);
      if (people.length > MAX_TYPING_AUDIENCE) return;
      const everyone = [...new Set([...people, user.id])].sort((a, b) => a - b);
      await sendEvent(tx, everyone, {
        type: "typing_edit_message",
        op,
        sender_id: user.id,
        message_id: message.id,
        recipient: { type: "direct", user_ids: everyone },
      });
      return;
    }
    const subscribers = await channelSubscriberIds(tx, message.channel.id, MAX_TYPING_AUDIENCE + 1);
    if (subscribers.length > MAX_TYPING_AUDIENCE) return;
    await sendEvent(
      tx,
      subscribers.filter((id) => id !== user.id),
      {
        type: "typing_edit_message",
        op,
        sender_id: user.id,
        message_id: message.id,
        recipient: { type: "channel", channel_id: message.channel.id, topic: message.topic },
      },
    );
  });
}
