import type { ChatEvent } from "./event";

/**
 * What a queue asked for at `POST /register` that changes how its events
 * look: Zulip shapes each event per client, so do we, when a poll reads it.
 */
export interface QueueShape {
  /** Message content as HTML (true) or as its Markdown source. */
  apply_markdown: boolean;
  /** Avatar URLs left out (null) where the client computes Gravatar's itself. */
  client_gravatar: boolean;
  /** `delete_message` with `message_ids` (true) or one `message_id`. */
  bulk_message_deletion: boolean;
  /**
   * A deactivated user group as a `user_group` `update` with `deactivated`
   * (true, the client filters them itself), or as a `remove`.
   */
  include_deactivated_groups: boolean;
}

/** The number (0-15) of a shape: what is made once per shape is kept at this index. */
function shapeIndex(shape: QueueShape): number {
  return (
    (shape.apply_markdown ? 1 : 0) +
    (shape.client_gravatar ? 2 : 0) +
    (shape.bulk_message_deletion ? 4 : 0) +
    (shape.include_deactivated_groups ? 8 : 0)
  );
}

/** The shapes in use, by {@link shapeIndex} (16 at most): each queue holds one of these, not a copy. */
const SHAPES = new Map<number, QueueShape>();

/** The shape of a queue from its stored options (older queues: Zulip's defaults). */
export function queueShape(options: unknown): QueueShape {
  const stored = (options ?? {}) as Partial<Record<keyof QueueShape, unknown>>;
  const shape: QueueShape = {
    apply_markdown: stored.apply_markdown === true,
    client_gravatar: stored.client_gravatar !== false,
    bulk_message_deletion: stored.bulk_message_deletion === true,
    include_deactivated_groups: stored.include_deactivated_groups === true,
  };
  const index = shapeIndex(shape);
  const known = SHAPES.get(index);
  if (known !== undefined) return known;
  SHAPES.set(index, Object.freeze(shape));
  return shape;
}

/**
 * What the stored form of an event carries for shaping and never sends:
 * the message's Markdown source and the sender's avatar URL.
 */
export interface MessageSource {
  content: string;
  avatar_url: string;
  /**
   * The sender's local echo: the queue that sent the message (`queue_id`)
   * and the id it gave it (`local_id`), which that queue's event carries as
   * `local_message_id`.
   */
  echo?: { queue_id: string; local_id: string };
}

/** `event` as the queue of `shape` receives it. */
function shapeEvent(event: ChatEvent, shape: QueueShape): ChatEvent {
  if (event.type === "message") {
    const { source, ...rest } = event as ChatEvent & { source?: MessageSource };
    const message = rest.message as Record<string, unknown>;
    if (source === undefined) return rest;
    return {
      ...rest,
      message: {
        ...message,
        avatar_url: shape.client_gravatar ? null : source.avatar_url,
        ...(shape.apply_markdown
          ? {}
          : { content: source.content, content_type: "text/x-markdown" }),
      },
    };
  }
  if (
    event.type === "user_group" &&
    event.op === "update" &&
    (event.data as { deactivated?: unknown } | undefined)?.deactivated === true &&
    !shape.include_deactivated_groups
  ) {
    return { type: "user_group", op: "remove", group_id: event.group_id };
  }
  if (event.type === "realm_user" && event.op === "add" && shape.client_gravatar) {
    return { ...event, person: { ...(event.person as object), avatar_url: null } };
  }
  return event;
}

/** The message ids of a `delete_message` event (as stored: `message_ids`). */
const deletedIds = (event: ChatEvent): number[] =>
  event.type === "delete_message" && Array.isArray(event.message_ids)
    ? (event.message_ids as number[])
    : [];

/**
 * How many ids a stored event takes in a queue that receives it one message
 * at a time: a deletion of N messages is N events without
 * `bulk_message_deletion` (Zulip's compatibility events), one with it.
 */
export function eventSpan(event: ChatEvent): number {
  return Math.max(1, deletedIds(event).length);
}

/**
 * The events the stored event `event` (numbered `id` in its queue) is for the
 * queue of `shape`, with their ids: one, or for a deletion without
 * `bulk_message_deletion` one per message, numbered up to `id` (the ids the
 * queue's counter set aside, {@link eventSpan}).
 */
export function shapeEvents(
  event: ChatEvent,
  shape: QueueShape,
  id: number,
): (ChatEvent & { id: number })[] {
  const ids = deletedIds(event);
  if (ids.length === 0 || shape.bulk_message_deletion) return [{ ...shapeEvent(event, shape), id }];
  const { message_ids: _all, ...rest } = event;
  return ids.map((messageId, i) => ({
    ...rest,
    message_id: messageId,
    id: id - (ids.length - 1 - i),
  }));
}

/** An event as a client receives it, serialized: its id and its JSON text. */
export interface EventText {
  id: number;
  text: string;
}

/** A stored event as a replica holds it, with the texts made of it so far. */
export interface TextSource {
  payload: unknown;
  seq: number;
  /** Per shape ({@link shapeIndex}): its events' texts. */
  texts?: (EventText[] | undefined)[];
}

/** The local echo of a stored `message` event, if it has one, with the message's sender. */
const echoOf = (payload: unknown): (MessageSource["echo"] & { sender: unknown }) | undefined => {
  const { source, message } = payload as {
    source?: MessageSource;
    message?: { sender_id?: unknown };
  };
  return source?.echo === undefined ? undefined : { ...source.echo, sender: message?.sender_id };
};

/**
 * The events the stored event `event` is for queue `queueId` of `shape`, as
 * texts ({@link shapeEvents}, serialized), made once per shape and kept on
 * `event`: a message to a thousand queues is serialized once, not a
 * thousand times. The queue that sent a message with a `local_id` gets its
 * own text, with `local_message_id`: the sender's own queue only (another
 * user's queue id names no echo of theirs).
 */
export function shapedTexts(
  event: TextSource,
  shape: QueueShape,
  queue: { id: string; user_id: number },
): EventText[] {
  const echo = echoOf(event.payload);
  if (echo !== undefined && echo.queue_id === queue.id && echo.sender === queue.user_id)
    return shapeEvents(event.payload as ChatEvent, shape, event.seq).map((e) => ({
      id: e.id,
      text: JSON.stringify({ ...e, local_message_id: echo.local_id }),
    }));
  const index = shapeIndex(shape);
  event.texts ??= [];
  let texts = event.texts[index];
  if (texts === undefined) {
    texts = shapeEvents(event.payload as ChatEvent, shape, event.seq).map((e) => ({
      id: e.id,
      text: JSON.stringify(e),
    }));
    event.texts[index] = texts;
  }
  return texts;
}
