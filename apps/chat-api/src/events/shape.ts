import type { ChatEvent } from "./queue";

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
}

/** The shape of a queue from its stored options (older queues: Zulip's defaults). */
export function queueShape(options: unknown): QueueShape {
  const stored = (options ?? {}) as Partial<Record<keyof QueueShape, unknown>>;
  return {
    apply_markdown: stored.apply_markdown === true,
    client_gravatar: stored.client_gravatar !== false,
    bulk_message_deletion: stored.bulk_message_deletion === true,
  };
}

/**
 * What the stored form of an event carries for shaping and never sends:
 * the message's Markdown source and the sender's avatar URL.
 */
export interface MessageSource {
  content: string;
  avatar_url: string;
}

/** `event` as the queue of `shape` receives it. */
export function shapeEvent(event: ChatEvent, shape: QueueShape): ChatEvent {
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
  if (event.type === "realm_user" && event.op === "add" && shape.client_gravatar) {
    return { ...event, person: { ...(event.person as object), avatar_url: null } };
  }
  if (event.type === "delete_message" && !shape.bulk_message_deletion) {
    const { message_ids: ids, ...rest } = event as ChatEvent & { message_ids: number[] };
    return { ...rest, message_id: ids[0] };
  }
  return event;
}
