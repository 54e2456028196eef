/** Zulip's HTML pieces: escaping, narrow URLs, code blocks, emoji spans. */
import { type LinkableChannel } from "./context";

/** Text as Zulip escapes it outside code: `&`, `<` and `>` only. */
export const escapeText = (text: string): string =>
  text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;");

/** Text as Zulip escapes it in attributes and code blocks: quotes too. */
export const escapeAttr = (text: string): string =>
  escapeText(text).replaceAll('"', "&quot;").replaceAll("'", "&#39;");

/** Zulip's encoding of a narrow URL's operand: percent-encoding with `.` for `%`. */
export function hashEncode(text: string): string {
  return encodeURIComponent(text)
    .replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
    .replace(/\./g, "%2E")
    .replace(/%/g, ".");
}

/** A channel's narrow URL operand: `{id}-{name with dashes for spaces}`. */
export const channelSlug = (channel: LinkableChannel): string =>
  `${String(channel.id)}-${hashEncode(channel.name.replace(/ /g, "-"))}`;

/** Zulip's `<div class="codehilite">` block, without syntax highlighting. */
export function codeBlock(code: string, language: string): string {
  const body = code.endsWith("\n") ? code : `${code}\n`;
  const lines = body
    .split("\n")
    .map((line) => line.replace(/[ \t]+$/, ""))
    .join("\n");
  const lang = language === "" ? "" : ` data-code-language="${escapeAttr(language)}"`;
  return `<div class="codehilite"${lang}><pre><span></span><code>${escapeAttr(lines)}</code></pre></div>\n`;
}

/** Zulip's markup of an emoji that is an image (a custom emoji, or `:zulip:`). */
export function emojiImage(name: string, src: string): string {
  return `<img alt=":${escapeAttr(name)}:" class="emoji" src="${escapeAttr(src)}" title="${escapeAttr(name.replaceAll("_", " "))}">`;
}

/** Zulip's markup of a unicode emoji. */
export function emojiSpan(name: string, code: string): string {
  const label = name.replaceAll("_", " ");
  return `<span aria-label="${escapeAttr(label)}" class="emoji emoji-${code}" role="img" title="${escapeAttr(label)}">:${escapeText(name)}:</span>`;
}
