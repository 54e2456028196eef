import { mutersOf } from "../db/queries/muted-users";
import type { Tx } from "../db/kysely";
import type { Database } from "../db/database";
import type { Channel } from "../gen/prisma/client";
import { logRows } from "../realtime/queue";
import type { MessageSource } from "../realtime/shape";
import type { AuthedUser } from "../caches/auth";
import { MESSAGE_FLAGS, usersByFlags } from "../lib/message-flag-bits";
import { channelToPostTo } from "./channel-posting";
import { checkContent, checkDirectRecipients, checkTopic } from "./message-checks";
import { contentFlags, renderContent } from "./render-context";
import type { RenderResult } from "../lib/markdown/context";
import type { Requester } from "../lib/render-pool";
import { linkMessageFiles, linkedPathIds } from "./uploads";
import { widgetOf } from "../lib/widgets";
import { insertSubmessage, newSubmessageId } from "../db/queries/submessages";
import { gravatarUrl } from "./user-view";
import { dmPeople, messageView } from "./message-views";
import {
  type NewMessage,
  type SubmessageView,
  alertWordsOf,
  channelRecipients,
  insertMessageRows,
  newMessageId,
} from "../db/queries/messages";
import type { NewEvent } from "../db/queries/events";

/** Who sends a message: a user, or the notification bot. */
export interface Sender {
  id: number;
  realm_id: number;
  email: string;
  delivery_email: string;
  full_name: string;
}

/** Where a message goes: a channel and topic, or a set of users (the sender included). */
export type Destination =
  | { kind: "channel"; channel: Channel; topic: string }
  | { kind: "direct"; userIds: readonly number[] };

/**
 * A new message worked out by reads (its recipients, its HTML, their flags,
 * its id): what {@link storeMessage} stores in one statement.
 */
interface PreparedMessage {
  message: NewMessage;
  readers: number[];
  flags: bigint[];
  events: NewEvent[];
  /** A `/poll` or `/todo` message's widget, stored with it. */
  widget?: SubmessageView;
}

/** Where a new message's reads look: a channel (by id) or a direct message's people. */
type Audience = { channelId: number } | { userIds: readonly number[] };

/** What a new message's reads found. */
interface MessageInputs {
  audience: { ids: number[]; alertWords: { user_id: number; word: string }[] };
  rendered: RenderResult;
  fresh: { id: number; realm_subdomain: string };
  /** A direct message's people's ids, in order, comma-separated (null for a channel's). */
  dmKey: string | null;
  people: Awaited<ReturnType<typeof dmPeople>>;
  /** Who muted the sender: the message reaches them read. */
  muters: number[];
}

/** A sender's local echo: its queue and the id it gave the message (`local_message_id` back). */
export type LocalEcho = NonNullable<MessageSource["echo"]>;

/** A direct message's people, the sender included, in id order. */
const directPeople = (sender: Sender, userIds: readonly number[]): number[] =>
  [...new Set([...userIds, sender.id])].sort((a, b) => a - b);

/**
 * Reads what a new message needs: its recipients (a channel's subscribers
 * with their alert words; a direct message's people and theirs), its
 * rendering, a new id, a direct message's people's names, and who muted
 * the sender. They do not
 * depend on each other and go at once: on a `Database` (outside a
 * transaction) each on a connection of its own, so a send waits for one
 * round trip where it waited for each in turn.
 */
async function readMessageInputs(
  tx: Tx,
  sender: Sender,
  audience: Audience,
  content: string,
  requester: Requester,
): Promise<MessageInputs> {
  const direct = "userIds" in audience ? directPeople(sender, audience.userIds) : undefined;
  const dmKey = direct?.join(",") ?? null;
  const [recipients, rendered, fresh, people, muters] = await Promise.all([
    "channelId" in audience
      ? channelRecipients(tx, audience.channelId)
      : directRecipients(tx, direct ?? []),
    renderContent(tx, sender, content, requester),
    newMessageId(tx, sender.realm_id),
    dmPeople(tx, [{ dm_key: dmKey }]),
    mutersOf(tx, sender.id),
  ]);
  return { audience: recipients, rendered, fresh, people, dmKey, muters };
}

/**
 * A new message from what its reads found: the flags it gives each
 * recipient, its row and its events.
 */
async function buildMessage(
  tx: Tx,
  sender: Sender,
  destination: Destination,
  content: string,
  { audience, rendered, fresh, people, dmKey, muters }: MessageInputs,
  echo?: LocalEcho,
): Promise<PreparedMessage> {
  const channelId = destination.kind === "channel" ? destination.channel.id : null;
  const topic = destination.kind === "channel" ? destination.topic : "";
  const readers = [...new Set(audience.ids)];
  const fromContent = await contentFlags(
    tx,
    rendered,
    content,
    readers,
    { senderId: sender.id, channelId, topic },
    audience.alertWords,
  );
  const readAlready = new Set([sender.id, ...muters]);
  const flagsOf = (userId: number): bigint =>
    (readAlready.has(userId) ? MESSAGE_FLAGS.read : 0n) | (fromContent.get(userId) ?? 0n);
  const message: NewMessage = {
    id: fresh.id,
    realm_id: sender.realm_id,
    sender_id: sender.id,
    channel_id: channelId,
    topic,
    dm_key: dmKey,
    content,
    rendered_content: rendered.html,
    date_sent: new Date(),
  };
  // A `/poll` or `/todo` message's widget, its first submessage (its id taken now, for the event).
  const made = widgetOf(content);
  const widget: SubmessageView | undefined =
    made === undefined
      ? undefined
      : {
          id: await newSubmessageId(tx),
          message_id: fresh.id,
          sender_id: sender.id,
          msg_type: "widget",
          content: JSON.stringify(made),
        };
  // The event's message object from what the send holds (a new message has no reactions).
  const view = messageView(
    {
      ...message,
      last_edit_time: null,
      edit_summary: null,
      sender_email: sender.email,
      sender_full_name: sender.full_name,
      sender_delivery_email: sender.delivery_email,
      realm_subdomain: fresh.realm_subdomain,
      channel_name: destination.kind === "channel" ? destination.channel.name : null,
      reactions: [],
      submessages: widget === undefined ? [] : [widget],
    },
    people,
    { clientGravatar: true, applyMarkdown: true },
  );
  // Each queue gets the content as it asked (HTML or Markdown) and avatars as
  // it asked: the stored event carries both forms (realtime/shape.ts).
  const source: MessageSource = {
    content,
    avatar_url: gravatarUrl(sender.delivery_email),
    ...(echo === undefined ? {} : { echo }),
  };
  // One event per distinct set of flags (most recipients share none).
  const events = logRows(
    usersByFlags(readers.map((userId) => ({ userId, flags: flagsOf(userId) }))).map(
      ({ flags, userIds }) => ({
        userIds,
        event: { type: "message", message: view, flags, source },
      }),
    ),
  );
  return {
    message,
    readers,
    flags: readers.map(flagsOf),
    events,
    ...(widget === undefined ? {} : { widget }),
  };
}

/** Where a message's reads look for its destination. */
const audienceOf = (destination: Destination): Audience =>
  destination.kind === "channel"
    ? { channelId: destination.channel.id }
    : { userIds: destination.userIds };

/** {@link readMessageInputs}, then {@link buildMessage}. */
async function readAndBuildMessage(
  tx: Tx,
  sender: Sender,
  destination: Destination,
  content: string,
  requester: Requester,
): Promise<PreparedMessage> {
  const inputs = await readMessageInputs(tx, sender, audienceOf(destination), content, requester);
  return buildMessage(tx, sender, destination, content, inputs);
}

/** A direct message's people (the sender included) with their alert words. */
async function directRecipients(
  tx: Tx,
  ids: number[],
): Promise<{ ids: number[]; alertWords: { user_id: number; word: string }[] }> {
  return { ids, alertWords: await alertWordsOf(tx, ids) };
}

/** Stores a prepared message, its recipients' rows and its events: one statement. */
async function storeMessage(tx: Tx, prepared: PreparedMessage): Promise<number> {
  const { message, readers, flags, events, widget } = prepared;
  await insertMessageRows(tx, message, readers, flags, events);
  if (widget !== undefined) await insertSubmessage(tx, widget);
  if (events.length > 0) await tx.wroteEvents();
  return message.id;
}

/**
 * Stores a message the server writes itself (a bot's notice) inside `tx`
 * with its per-recipient rows (unread for everyone but the sender) and sends
 * each recipient a `message` event with their flags. Returns the message id.
 */
export async function sendBotMessage(
  tx: Tx,
  sender: Sender,
  destination: Destination,
  content: string,
): Promise<number> {
  const id = await storeMessage(
    tx,
    await readAndBuildMessage(tx, sender, destination, content, undefined),
  );
  await linkMessageFiles(tx, sender, id, content, false);
  return id;
}

/**
 * A message sent by a request: its reads outside any transaction (under
 * PostgreSQL's READ COMMITTED each statement of a transaction reads a snapshot
 * of its own anyway, and none of these locks anything), then its write, one
 * statement, so one transaction by itself; a message that links uploaded
 * files writes their links too, in one transaction with it.
 */
async function storeSentMessage(
  db: Database,
  sender: Sender,
  destination: Destination,
  content: string,
  echo: LocalEcho | undefined,
  inputs?: MessageInputs,
): Promise<number> {
  const prepared = await buildMessage(
    db,
    sender,
    destination,
    content,
    inputs ?? (await readMessageInputs(db, sender, audienceOf(destination), content, sender.id)),
    echo,
  );
  // One statement is one transaction; a widget or linked files are written in one with it.
  if (linkedPathIds(content, sender.realm_id).length === 0 && prepared.widget === undefined)
    return storeMessage(db, prepared);
  return db.transaction(async (tx) => {
    const id = await storeMessage(tx, prepared);
    await linkMessageFiles(tx, sender, id, content, false);
    return id;
  });
}

/** What POST /messages asks for, parsed. */
export type OutgoingMessage = (
  | { kind: "channel"; to: number | string; topic: string; content: string }
  | { kind: "direct"; to: readonly (number | string)[]; content: string }
) & { echo?: LocalEcho };

/** A message checked with Zulip's rules: its content as stored and where it goes. */
export interface CheckedMessage {
  content: string;
  destination: Destination;
}

/**
 * Checks a message `user` would send now with POST /messages' rules (see
 * {@link doSendMessage}), without sending it: what a scheduled message is
 * checked with when it is scheduled, and again when it is sent.
 */
export async function checkOutgoing(
  tx: Tx,
  user: AuthedUser,
  outgoing: OutgoingMessage,
): Promise<CheckedMessage> {
  const content = checkContent(outgoing.content);
  if (outgoing.kind === "direct")
    return {
      content,
      destination: {
        kind: "direct",
        userIds: await checkDirectRecipients(tx, user, outgoing.to),
      },
    };
  const topic = checkTopic(outgoing.topic);
  const channel = await channelToPostTo(tx, user, outgoing.to, topic);
  return { content, destination: { kind: "channel", channel, topic } };
}

/**
 * Sends a message checked with {@link checkOutgoing} inside transaction
 * `tx`, with its files linked: how the server sends a scheduled message in
 * the transaction that marks it sent. Returns the message id.
 */
export async function sendCheckedMessage(
  tx: Tx,
  user: AuthedUser,
  { content, destination }: CheckedMessage,
): Promise<number> {
  // The server's own work at the time it chose (as a bot's notice): not counted in the
  // sender's share of the render pool, which would refuse it while they send by hand.
  const id = await storeMessage(
    tx,
    await readAndBuildMessage(tx, user, destination, content, undefined),
  );
  await linkMessageFiles(tx, user, id, content, false);
  return id;
}

/**
 * POST /messages: checks the destination and content with Zulip's rules
 * (channel access, posting and topic permissions, the channel's topics
 * policy; recipients of the realm), then stores the message and its events
 * in one transaction. Returns the message id.
 */
export async function doSendMessage(
  db: Database,
  user: AuthedUser,
  outgoing: OutgoingMessage,
): Promise<number> {
  const content = checkContent(outgoing.content);
  if (outgoing.kind === "direct") {
    const ids = await checkDirectRecipients(db, user, outgoing.to);
    return storeSentMessage(db, user, { kind: "direct", userIds: ids }, content, outgoing.echo);
  }
  const topic = checkTopic(outgoing.topic);
  const { to } = outgoing;
  if (typeof to === "number") {
    // By id, the message's reads go beside the channel's checks: one round trip's wait for
    // both. A refused send drops what they read, and its error comes first, as Zulip's order
    // has it (a channel error before one of the content).
    const [checked, read] = await Promise.allSettled([
      channelToPostTo(db, user, to, topic),
      readMessageInputs(db, user, { channelId: to }, content, user.id),
    ]);
    if (checked.status === "rejected") throw checked.reason;
    if (read.status === "rejected") throw read.reason;
    return storeSentMessage(
      db,
      user,
      { kind: "channel", channel: checked.value, topic },
      content,
      outgoing.echo,
      read.value,
    );
  }
  const channel = await channelToPostTo(db, user, to, topic);
  return storeSentMessage(db, user, { kind: "channel", channel, topic }, content, outgoing.echo);
}
