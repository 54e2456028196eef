/** Zulip's inline syntax on markdown-it: mentions, channel links, emoji, `<time:>`, TeX, strikethrough. */
import katex from "katex";
import { unicodeEmojiCode } from "../emoji";
import { type RenderEnv, type StateInline, WILDCARDS } from "./context";
import { channelSlug, emojiImage, emojiSpan, escapeAttr, escapeText, hashEncode } from "./html";

/** Inline rule: `@**Name**`, `@**Name|id**`, `@_**Name**`, wildcards, `@*group*`, `@_*group*`. */
export function mentionRule(state: StateInline, silent: boolean): boolean {
  const src = state.src;
  const start = state.pos;
  if (src.charCodeAt(start) !== 0x40 /* @ */) return false;
  const match = /^@(_?)(\*\*([^*\n]+)\*\*|\*([^*\n]+)\*)/.exec(src.slice(start, start + 300));
  if (match === null) return false;
  const env = state.env as unknown as RenderEnv;
  const quiet = match[1] === "_";
  const [whole = ""] = match;
  const personName = match[3];
  const groupName = match[4];
  let html: string | undefined;
  if (personName !== undefined) {
    const wildcard = WILDCARDS[personName];
    if (wildcard !== undefined) {
      html = `<span class="${wildcard.className}${quiet ? " silent" : ""}"${wildcard.kind === "channel" ? ' data-user-id="*"' : ""}>${quiet ? "" : "@"}${personName}</span>`;
      if (!silent && !quiet) env.result.wildcard ??= wildcard.kind;
    } else {
      const bar = personName.lastIndexOf("|");
      const byId = bar >= 0 ? Number(personName.slice(bar + 1)) : undefined;
      const name = bar >= 0 ? personName.slice(0, bar) : personName;
      const person =
        byId !== undefined && Number.isInteger(byId)
          ? env.context.people.find((p) => p.id === byId && (name === "" || p.full_name === name))
          : env.context.people.find((p) => p.full_name.toLowerCase() === name.toLowerCase());
      if (person !== undefined) {
        html = `<span class="user-mention${quiet ? " silent" : ""}" data-user-id="${String(person.id)}">${quiet ? "" : "@"}${escapeText(person.full_name)}</span>`;
        if (!silent && !quiet) env.result.mentionedUserIds.add(person.id);
      }
    }
  } else if (groupName !== undefined) {
    const group = env.context.groups.find((g) => g.name.toLowerCase() === groupName.toLowerCase());
    if (group !== undefined) {
      html = `<span class="user-group-mention${quiet ? " silent" : ""}" data-user-group-id="${String(group.id)}">${quiet ? "" : "@"}${escapeText(group.name)}</span>`;
      if (!silent && !quiet) env.result.mentionedGroupIds.add(group.id);
    }
  }
  if (html === undefined) return false;
  if (!silent) state.push("zulip_html", "", 0).content = html;
  state.pos += whole.length;
  return true;
}

/** Inline rule: `#**channel**` and `#**channel>topic**`. */
export function channelLinkRule(state: StateInline, silent: boolean): boolean {
  const start = state.pos;
  if (state.src.charCodeAt(start) !== 0x23 /* # */) return false;
  const match = /^#\*\*([^*\n>]+)(?:>([^*\n]*))?\*\*/.exec(state.src.slice(start, start + 300));
  if (match === null) return false;
  const env = state.env as unknown as RenderEnv;
  const [whole = "", name = "", topic] = match;
  const channel = env.context.channels.find((c) => c.name.toLowerCase() === name.toLowerCase());
  if (channel === undefined) return false;
  if (!silent) {
    const href = `/#narrow/channel/${channelSlug(channel)}`;
    state.push("zulip_html", "", 0).content =
      topic === undefined
        ? `<a class="stream" data-stream-id="${String(channel.id)}" href="${href}">#${escapeText(channel.name)}</a>`
        : `<a class="stream-topic" data-stream-id="${String(channel.id)}" href="${href}/topic/${hashEncode(topic)}">#${escapeText(channel.name)} &gt; ${escapeText(topic)}</a>`;
  }
  state.pos += whole.length;
  return true;
}

/** Where Zulip's own emoji, `:zulip:`, is served. */
export const ZULIP_EMOJI_URL = "/static/generated/emoji/images/emoji/unicode/zulip.png";

/** Inline rule: `:name:` emoji. */
export function emojiRule(state: StateInline, silent: boolean): boolean {
  const start = state.pos;
  if (state.src.charCodeAt(start) !== 0x3a /* : */) return false;
  const match = /^:([a-z0-9_+-]+):/.exec(state.src.slice(start, start + 120));
  if (match === null) return false;
  const [whole = "", name = ""] = match;
  const env = state.env as unknown as RenderEnv;
  // A custom emoji of the realm, then Zulip's own, then a unicode emoji (Zulip's order).
  const custom = env.context.customEmoji.find((e) => e.name === name);
  const image =
    custom === undefined ? (name === "zulip" ? ZULIP_EMOJI_URL : undefined) : custom.source_url;
  if (image !== undefined) {
    if (!silent) state.push("zulip_html", "", 0).content = emojiImage(name, image);
    state.pos += whole.length;
    return true;
  }
  const code = unicodeEmojiCode(name);
  if (code === undefined || name.startsWith("skin-tone") || code.includes("-200d-")) return false;
  if (!silent) state.push("zulip_html", "", 0).content = emojiSpan(name, code);
  state.pos += whole.length;
  return true;
}

/**
 * A time as `<time:...>` gives it: seconds since 1970, or a date and time
 * (ISO 8601 or the usual written forms), UTC unless it names a zone.
 */
function parseTime(raw: string): Date {
  if (/^\d{1,12}$/.test(raw)) return new Date(Number(raw) * 1000);
  const named = /(Z|[+-]\d{2}:?\d{2}|\b(UTC|GMT))$/i.test(raw.trim());
  const iso = /^\d{4}-\d{2}-\d{2}(T[\d:.]+)?$/.test(raw.trim());
  return new Date(
    named ? raw : iso ? `${raw.trim()}${raw.includes("T") ? "Z" : "T00:00:00Z"}` : `${raw} UTC`,
  );
}

/** Inline rule: `<time:ISO-8601>` as Zulip's `<time>` element. */
export function timeRule(state: StateInline, silent: boolean): boolean {
  const start = state.pos;
  if (!state.src.startsWith("<time:", start)) return false;
  const match = /^<time:([^>\n]{1,100})>/.exec(state.src.slice(start, start + 120));
  if (match === null) return false;
  const [whole = "", raw = ""] = match;
  const parsed = parseTime(raw);
  if (!silent) {
    state.push("zulip_html", "", 0).content = Number.isNaN(parsed.getTime())
      ? `<span class="timestamp-error">Invalid time format: ${escapeText(raw)}</span>`
      : `<time datetime="${parsed.toISOString().replace(/\.000Z$/, "Z")}">${escapeText(raw)}</time>`;
  }
  state.pos += whole.length;
  return true;
}

/**
 * KaTeX's own bounds: at most this many macro expansions in one formula
 * (KaTeX's default is 1,000; a formula people write uses a handful), and no
 * size asked for (`\rule`, `\kern`, `\Huge` boxes) larger than this many
 * ems (KaTeX's default is unbounded). They cut a macro bomb short early; the
 * render's deadline in its worker thread (lib/render-pool.ts) bounds the rest.
 */
export const KATEX_MAX_EXPAND = 100;
export const KATEX_MAX_SIZE_EM = 50;

/**
 * TeX as KaTeX renders it (HTML and MathML, as Zulip's), or undefined where
 * KaTeX refuses it (bad TeX, or past its bounds).
 */
function tex(source: string, displayMode: boolean): string | undefined {
  try {
    return katex.renderToString(source, {
      displayMode,
      throwOnError: true,
      strict: "ignore",
      maxExpand: KATEX_MAX_EXPAND,
      maxSize: KATEX_MAX_SIZE_EM,
    });
  } catch {
    return undefined;
  }
}

/** A `math` fence: each paragraph a displayed formula, or Zulip's error markup. */
export function mathBlock(content: string): string {
  return content
    .replace(/\n$/, "")
    .split(/\n\n/)
    .filter((paragraph) => paragraph.trim() !== "")
    .map((paragraph) => {
      const html =
        tex(paragraph, true) ??
        `<span class="tex-error">${escapeAttr(paragraph).replaceAll("&#39;", "&#x27;")}</span>`;
      return `<p>${html}</p>\n`;
    })
    .join("");
}

/** `$$...$$` at a position (sticky: no copy of the rest of the text per attempt). */
const TEX = /\$\$([^\n_$](?:\\\$|[^$\n])*)\$\$(?!\$)/y;

/**
 * Inline rule: `$$...$$` is TeX (Zulip's pattern: not next to another `$`,
 * on one line, not starting with `_`, `\$` allowed inside).
 */
export function texRule(state: StateInline, silent: boolean): boolean {
  const src = state.src;
  const start = state.pos;
  if (!src.startsWith("$$", start) || src.charAt(start - 1) === "$") return false;
  TEX.lastIndex = start;
  const match = TEX.exec(src);
  if (match === null || start + match[0].length > state.posMax) return false;
  if (!silent) {
    const body = match[1] ?? "";
    const token = state.push("zulip_html", "", 0);
    token.content =
      tex(body, false) ?? `<span class="tex-error">${escapeText(`$$${body}$$`)}</span>`;
  }
  state.pos += match[0].length;
  return true;
}

/** `~~text~~` at a position. */
const STRIKETHROUGH = /~~([^~\n]+?)~~(?!~)/y;

/**
 * Inline rule: `~~text~~` is struck through (Zulip's pattern: on one line,
 * not next to another `~`; spaces inside allowed).
 */
export function strikethroughRule(state: StateInline, silent: boolean): boolean {
  const start = state.pos;
  if (!state.src.startsWith("~~", start) || state.src.charAt(start - 1) === "~") return false;
  STRIKETHROUGH.lastIndex = start;
  const match = STRIKETHROUGH.exec(state.src);
  if (match === null || start + match[0].length > state.posMax) return false;
  if (!silent) {
    const posMax = state.posMax;
    state.push("s_open", "del", 1);
    state.pos = start + 2;
    state.posMax = start + 2 + (match[1]?.length ?? 0);
    state.md.inline.tokenize(state);
    state.push("s_close", "del", -1);
    state.posMax = posMax;
  }
  state.pos = start + match[0].length;
  return true;
}
