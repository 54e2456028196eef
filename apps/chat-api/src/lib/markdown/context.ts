/** What every part of the renderer shares: the render's context and result, its time limit, markdown-it's types. */
import type MarkdownIt from "markdown-it";
import { JsonableError } from "@repo/envelope";
import type { RE2JS } from "re2js";

export type Token = MarkdownIt.Token;

export type StateCore = MarkdownIt.StateCore;

export type StateInline = MarkdownIt.StateInline;

/** A person a message may mention: `@**Full Name**` or `@**Full Name|id**`. */
export interface MentionablePerson {
  id: number;
  full_name: string;
}

/** A channel a message may link: `#**name**`, `#**name>topic**`. */
export interface LinkableChannel {
  id: number;
  name: string;
}

/** A linkifier ready to run: its pattern compiled (RE2), its template's expansion. */
export interface CompiledLinkifier {
  pattern: RE2JS;
  expand: (groups: Record<string, string>) => string;
}

/** A realm linkifier: a pattern (RE2 syntax, run in linear time) and its RFC 6570 URL template. */
export interface Linkifier {
  pattern: string;
  url_template: string;
}

/** A custom emoji of the realm a message may show: `:name:`. */
export interface CustomEmoji {
  name: string;
  /** Where its image is served (`/user_avatars/{realm_id}/emoji/images/{file}`). */
  source_url: string;
}

/**
 * What a render may refer to: the realm's people, groups, channels,
 * linkifiers and custom emoji, and whether the author has Zulip's
 * `translate_emoticons` on (`:)` becomes the `smile` emoji).
 */
export interface RenderContext {
  /** People by lower-cased full name (several may share one), and by id. */
  people: readonly MentionablePerson[];
  groups: readonly { id: number; name: string }[];
  channels: readonly LinkableChannel[];
  linkifiers: readonly Linkifier[];
  customEmoji: readonly CustomEmoji[];
  translateEmoticons: boolean;
}

/** What a message's content says beyond its HTML: whom it mentions. */
export interface RenderResult {
  html: string;
  /** People mentioned by name (not silently). */
  mentionedUserIds: Set<number>;
  /** Groups mentioned (not silently). */
  mentionedGroupIds: Set<number>;
  /** `@**all**`, `@**everyone**`, `@**channel**`, `@**stream**` (channel) or `@**topic**`. */
  wildcard: "channel" | "topic" | undefined;
}

/** The names Zulip gives wildcard mentions, and what they reach. */
export const WILDCARDS: Record<string, { kind: "channel" | "topic"; className: string }> = {
  all: { kind: "channel", className: "user-mention channel-wildcard-mention" },
  everyone: { kind: "channel", className: "user-mention channel-wildcard-mention" },
  channel: { kind: "channel", className: "user-mention channel-wildcard-mention" },
  stream: { kind: "channel", className: "user-mention channel-wildcard-mention" },
  topic: { kind: "topic", className: "topic-mention" },
};

/** Per render: the context and what the content turned out to mention. */
export interface RenderEnv {
  context: RenderContext;
  result: RenderResult;
  compiled: CompiledLinkifier[];
  /** `performance.now()` past which the render gives up. */
  deadline: number;
}

/**
 * How long one render may take, in milliseconds (Zulip allows 5 s). The
 * longest message renders in about 25 ms whatever its content (markdown-it
 * and RE2 run in linear time); a realm with very many linkifiers is what
 * could come near it.
 */
export const RENDER_TIME_LIMIT_MS = 1000;

/** Zulip's answer to a render that ran out of time. */
export const RENDER_TIMEOUT_MESSAGE = "Unable to render message";

/** Throws once the render's time is up: checked between parsing steps, paragraphs and linkifiers. */
export function checkDeadline(env: RenderEnv): void {
  if (performance.now() > env.deadline) throw new JsonableError(RENDER_TIMEOUT_MESSAGE);
}
