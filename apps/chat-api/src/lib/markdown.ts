import { StdUriTemplate } from "@std-uritemplate/std-uritemplate";
import katex from "katex";
import MarkdownIt from "markdown-it";
import { JsonableError } from "@repo/envelope";
import { RE2JS } from "re2js";
import { emojiNameOfCode, unicodeEmojiCode } from "./emoji";

type Token = MarkdownIt.Token;
type StateCore = MarkdownIt.StateCore;
type StateInline = MarkdownIt.StateInline;

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

/** A realm linkifier: a pattern (RE2 syntax, run in linear time) and its RFC 6570 URL template. */
export interface Linkifier {
  pattern: string;
  url_template: string;
}

/** What a render may refer to: the realm's people, groups, channels and linkifiers. */
export interface RenderContext {
  /** People by lower-cased full name (several may share one), and by id. */
  people: readonly MentionablePerson[];
  groups: readonly { id: number; name: string }[];
  channels: readonly LinkableChannel[];
  linkifiers: readonly Linkifier[];
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
const WILDCARDS: Record<string, { kind: "channel" | "topic"; className: string }> = {
  all: { kind: "channel", className: "user-mention channel-wildcard-mention" },
  everyone: { kind: "channel", className: "user-mention channel-wildcard-mention" },
  channel: { kind: "channel", className: "user-mention channel-wildcard-mention" },
  stream: { kind: "channel", className: "user-mention channel-wildcard-mention" },
  topic: { kind: "topic", className: "topic-mention" },
};

/** Per render: the context and what the content turned out to mention. */
interface RenderEnv {
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
function checkDeadline(env: RenderEnv): void {
  if (performance.now() > env.deadline) throw new JsonableError(RENDER_TIMEOUT_MESSAGE);
}

interface CompiledLinkifier {
  pattern: RE2JS;
  expand: (groups: Record<string, string>) => string;
}

/** Text as Zulip escapes it outside code: `&`, `<` and `>` only. */
const escapeText = (text: string): string =>
  text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;");

/** Text as Zulip escapes it in attributes and code blocks: quotes too. */
const escapeAttr = (text: string): string =>
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
function codeBlock(code: string, language: string): string {
  const body = code.endsWith("\n") ? code : `${code}\n`;
  const lines = body
    .split("\n")
    .map((line) => line.replace(/[ \t]+$/, ""))
    .join("\n");
  const lang = language === "" ? "" : ` data-code-language="${escapeAttr(language)}"`;
  return `<div class="codehilite"${lang}><pre><span></span><code>${escapeAttr(lines)}</code></pre></div>\n`;
}

function emojiSpan(name: string, code: string): string {
  const label = name.replaceAll("_", " ");
  return `<span aria-label="${escapeAttr(label)}" class="emoji emoji-${code}" role="img" title="${escapeAttr(label)}">:${escapeText(name)}:</span>`;
}

/** Inline rule: `@**Name**`, `@**Name|id**`, `@_**Name**`, wildcards, `@*group*`, `@_*group*`. */
function mentionRule(state: StateInline, silent: boolean): boolean {
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
function channelLinkRule(state: StateInline, silent: boolean): boolean {
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

/** The markup of `:zulip:`, Zulip's own emoji. */
const ZULIP_EMOJI =
  '<img alt=":zulip:" class="emoji" src="/static/generated/emoji/images/emoji/unicode/zulip.png" title="zulip">';

/** Inline rule: `:name:` emoji. */
function emojiRule(state: StateInline, silent: boolean): boolean {
  const start = state.pos;
  if (state.src.charCodeAt(start) !== 0x3a /* : */) return false;
  const match = /^:([a-z0-9_+-]+):/.exec(state.src.slice(start, start + 120));
  if (match === null) return false;
  const [whole = "", name = ""] = match;
  if (name === "zulip") {
    // Zulip's own emoji, an image served with its web app.
    if (!silent) state.push("zulip_html", "", 0).content = ZULIP_EMOJI;
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
function timeRule(state: StateInline, silent: boolean): boolean {
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

/** Emoji characters in text: one or more code points, variation selectors dropped. */
const EMOJI_RUN =
  /\p{Extended_Pictographic}(?:\u{FE0F}|\u{200D}\p{Extended_Pictographic}|[\u{1F3FB}-\u{1F3FF}])*|[#*0-9]\u{FE0F}?\u{20E3}/gu;

/** The Zulip code of an emoji as typed: hex code points without variation selectors. */
const codeOf = (text: string): string =>
  Array.from(text)
    .filter((c) => c !== "\u{FE0F}")
    .map((c) => (c.codePointAt(0) ?? 0).toString(16).padStart(4, "0"))
    .join("-");

/**
 * Core rule, after inline parsing: in text outside links and code, unicode
 * emoji become Zulip's emoji spans and the realm's linkifiers become links
 * (each pattern in the realm's order, RE2: linear time whatever the pattern).
 */
function textRule(state: StateCore): void {
  const env = state.env as unknown as RenderEnv;
  for (const block of state.tokens) {
    if (block.type !== "inline" || block.children === null) continue;
    const out: Token[] = [];
    let linkDepth = 0;
    for (const token of block.children) {
      if (token.type === "link_open") linkDepth += 1;
      if (token.type === "link_close") linkDepth -= 1;
      if (token.type !== "text" || token.content === "") {
        out.push(token);
        continue;
      }
      for (const piece of linkDepth > 0 ? [token.content] : splitLinkified(token.content, env)) {
        if (typeof piece !== "string") {
          const open = new state.Token("link_open", "a", 1);
          open.attrs = [["href", piece.href]];
          out.push(open, ...emojified(state, piece.text), new state.Token("link_close", "a", -1));
          continue;
        }
        out.push(...emojified(state, piece));
      }
    }
    block.children = out;
  }
}

/** `text` as text tokens and emoji spans. */
function emojified(state: StateCore, text: string): Token[] {
  const tokens: Token[] = [];
  let last = 0;
  const pushText = (content: string) => {
    if (content === "") return;
    const token = new state.Token("text", "", 0);
    token.content = content;
    tokens.push(token);
  };
  for (const match of text.matchAll(EMOJI_RUN)) {
    const code = codeOf(match[0]);
    const name = emojiNameOfCode(code);
    if (name === undefined) continue;
    pushText(text.slice(last, match.index));
    const span = new state.Token("zulip_html", "", 0);
    span.content = emojiSpan(name, code);
    tokens.push(span);
    last = match.index + match[0].length;
  }
  pushText(text.slice(last));
  return tokens;
}

/** `text` split into plain pieces and linkifier links, the realm's linkifiers in order. */
function splitLinkified(text: string, env: RenderEnv): (string | { text: string; href: string })[] {
  let pieces: (string | { text: string; href: string })[] = [text];
  for (const linkifier of env.compiled) {
    checkDeadline(env);
    pieces = pieces.flatMap((piece) => {
      if (typeof piece !== "string") return [piece];
      const found: (string | { text: string; href: string })[] = [];
      const matcher = linkifier.pattern.matcher(piece);
      let last = 0;
      while (matcher.find()) {
        const start = matcher.start();
        const end = matcher.end();
        if (end === start) break;
        const before = start === 0 ? "" : piece.charAt(start - 1);
        const after = piece.charAt(end);
        // Zulip's boundaries: not inside a word.
        if (/[\p{L}\p{N}_]/u.test(before) || /[\p{L}\p{N}_]/u.test(after)) continue;
        const groups: Record<string, string> = {};
        for (const name of Object.keys(matcher.namedGroups))
          groups[name] = matcher.group(name) ?? "";
        found.push(piece.slice(last, start), {
          text: piece.slice(start, end),
          href: linkifier.expand(groups),
        });
        last = end;
      }
      found.push(piece.slice(last));
      return found.filter((p) => p !== "");
    });
  }
  return pieces;
}

/** Top-level domains Zulip does not link without a scheme: they are file extensions too. */
const FILE_LIKE_TLDS = new Set(["java", "md", "mov", "py", "zip"]);

/** URL schemes a link may have (Zulip's list); anything else stays text. */
const LINK_SCHEMES = new Set(["http", "https", "ftp", "mailto", "tel", "sms", "irc", "xmpp"]);

/**
 * Core rule, after linkify: an address found in text is a link only where
 * Zulip's would be (after a space, a quote, `(`, `,`, `:` or `<`, or at the
 * start), and without a trailing colon.
 */
function linkifyBounds(state: StateCore): void {
  for (const block of state.tokens) {
    const children = block.children;
    if (block.type !== "inline" || children === null) continue;
    for (let i = 0; i < children.length; i++) {
      const open = children[i];
      if (open?.type !== "link_open" || open.markup !== "linkify") continue;
      const text = children[i + 1];
      const close = children[i + 2];
      if (text?.type !== "text" || close?.type !== "link_close") continue;
      const before = children[i - 1];
      const last = before?.type === "text" ? before.content.slice(-1) : "";
      const after = children[i + 3];
      const href = String(open.attrGet("href") ?? "");
      const next = after?.type === "text" ? after.content.charAt(0) : "";
      const rest = after?.type === "text" ? after.content : "";
      const isEmail = href.startsWith("mailto:");
      if (
        (last !== "" && !/[\s'"(,:<]/.test(last)) ||
        (isEmail && next === "/") ||
        // Zulip's pattern: an address ends the text, or is followed by a
        // space, or by one punctuation mark and then the end or a space.
        (!isEmail && !/^(?:[:;?),.'"!]?(?:\s|$))/.test(rest))
      ) {
        // Not a link: back to text, joined with its neighbours.
        const plain = new state.Token("text", "", 0);
        const joinBefore = before?.type === "text";
        const joinAfter = after?.type === "text";
        plain.content = `${joinBefore ? before.content : ""}${text.content}${joinAfter ? after.content : ""}`;
        const from = joinBefore ? i - 1 : i;
        children.splice(from, 3 + (joinBefore ? 1 : 0) + (joinAfter ? 1 : 0), plain);
        i = from;
        continue;
      }
      if (text.content.endsWith(":")) {
        text.content = text.content.slice(0, -1);
        open.attrSet("href", String(open.attrGet("href") ?? "").replace(/:$/, ""));
        const colon = new state.Token("text", "", 0);
        colon.content = ":";
        children.splice(i + 3, 0, colon);
      }
    }
  }
}

/** Core rule: `***foo***` is `<strong><em>foo</em></strong>`, as Zulip nests them. */
function strongEmRule(state: StateCore): void {
  for (const block of state.tokens) {
    if (block.type !== "inline" || block.children === null) continue;
    // Emphasis leaves empty text tokens between its marks.
    const c = block.children.filter((t) => t.type !== "text" || t.content !== "");
    block.children = c;
    for (let i = 0; i + 1 < c.length; i++) {
      const [em, strong] = [c[i], c[i + 1]];
      if (em?.type !== "em_open" || strong?.type !== "strong_open") continue;
      let depth = 0;
      for (let j = i + 2; j + 1 < c.length; j++) {
        const t = c[j];
        if (t?.type === "strong_open") depth += 1;
        if (t?.type !== "strong_close") continue;
        if (depth > 0) {
          depth -= 1;
          continue;
        }
        const next = c[j + 1];
        if (next?.type === "em_close") {
          c[i] = strong;
          c[i + 1] = em;
          c[j] = next;
          c[j + 1] = t;
        }
        break;
      }
    }
  }
}

/** Compiled linkifiers by pattern and template (a realm's few, reused by every render). */
const compiledCache = new Map<string, CompiledLinkifier | null>();
const MAX_CACHED_LINKIFIERS = 10_000;

/** The realm's linkifiers, compiled (RE2; a pattern RE2 refuses is skipped), from the cache. */
function compileLinkifiers(linkifiers: readonly Linkifier[]): CompiledLinkifier[] {
  return linkifiers.flatMap((l) => {
    const key = `${l.pattern}\u0000${l.url_template}`;
    let compiled = compiledCache.get(key);
    if (compiled === undefined) {
      compiled = compileLinkifier(l);
      if (compiledCache.size >= MAX_CACHED_LINKIFIERS) compiledCache.clear();
      compiledCache.set(key, compiled);
    }
    return compiled === null ? [] : [compiled];
  });
}

function compileLinkifier(l: Linkifier): CompiledLinkifier | null {
  try {
    // Python's named groups, `(?P<name>...)`, in RE2JS's spelling.
    const pattern = RE2JS.compile(l.pattern.replace(/\(\?P</g, "(?<"));
    const template = l.url_template;
    return {
      pattern,
      expand: (groups: Record<string, string>) => StdUriTemplate.expand(template, groups),
    };
  } catch {
    return null;
  }
}

/** Fenced blocks: code (Zulip's codehilite markup), `quote`, `spoiler`. */
function fenceRenderer(md: MarkdownIt.MarkdownIt): MarkdownIt.RendererRule {
  return (tokens, idx, _options, env) => {
    const token = tokens[idx];
    if (token === undefined) return "";
    const info = token.info.trim();
    const [language = "", ...rest] = info.split(/\s+/);
    if (language === "quote" || language === "quoted")
      return `<blockquote>\n${md.render(token.content, env)}</blockquote>\n`;
    if (language === "spoiler") {
      const header = rest.join(" ");
      const headerHtml = header === "" ? "" : md.render(header, env);
      return `<div class="spoiler-block"><div class="spoiler-header">\n${headerHtml}</div><div class="spoiler-content" aria-hidden="true">\n${md.render(token.content, env)}</div></div>\n`;
    }
    if (language === "math") return mathBlock(token.content);
    return codeBlock(token.content, language);
  };
}

/**
 * TeX as KaTeX renders it (HTML and MathML, as Zulip's), or undefined where
 * KaTeX refuses it. KaTeX's own limits (macro expansions) bound its work.
 */
function tex(source: string, displayMode: boolean): string | undefined {
  try {
    return katex.renderToString(source, { displayMode, throwOnError: true, strict: "ignore" });
  } catch {
    return undefined;
  }
}

/** A `math` fence: each paragraph a displayed formula, or Zulip's error markup. */
function mathBlock(content: string): string {
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
function texRule(state: StateInline, silent: boolean): boolean {
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

const zulipSyntax = (md: MarkdownIt.MarkdownIt): void => {
  md.inline.ruler.after("backticks", "zulip_tex", texRule);
  md.inline.ruler.before("emphasis", "zulip_mention", mentionRule);
  md.inline.ruler.before("emphasis", "zulip_channel_link", channelLinkRule);
  md.inline.ruler.before("emphasis", "zulip_emoji", emojiRule);
  md.inline.ruler.before("autolink", "zulip_time", timeRule);
  // Zulip has no `_` emphasis: `_foo_` and `__foo__` stay as typed.
  const emphasis = md.inline.ruler.__rules__.find((r) => r.name === "emphasis")?.fn;
  if (emphasis !== undefined)
    md.inline.ruler.at("emphasis", (state, silent) =>
      state.src.charCodeAt(state.pos) === 0x5f ? false : emphasis(state, silent),
    );
  // Inline code keeps its spaces as typed (` outer ` is " outer "), as Zulip's.
  const backticks = md.inline.ruler.__rules__.find((r) => r.name === "backticks")?.fn;
  if (backticks !== undefined)
    md.inline.ruler.at("backticks", (state, silent) => {
      const start = state.pos;
      if (!backticks(state, silent)) return false;
      const token = state.tokens.at(-1);
      if (!silent && token?.type === "code_inline") {
        const n = token.markup.length;
        token.content = state.src.slice(start + n, state.pos - n).replace(/\n/g, " ");
      }
      return true;
    });
  // A fence's header holds no tildes or backticks (Zulip's fence pattern).
  const fence = md.block.ruler.__rules__.find((r) => r.name === "fence")?.fn;
  if (fence !== undefined)
    md.block.ruler.at(
      "fence",
      (state, startLine, endLine, silent) => {
        const start = (state.bMarks[startLine] ?? 0) + (state.tShift[startLine] ?? 0);
        const line = state.src.slice(start, state.eMarks[startLine]);
        const info = line.replace(/^(~{3,}|`{3,})/, "");
        if (/[~`]/.test(info)) return false;
        return fence(state, startLine, endLine, silent);
      },
      { alt: ["paragraph", "reference", "blockquote", "list"] },
    );
  // Addresses without a scheme are links too (`example.com`), except for
  // endings that are more often file names (Zulip's list); `<...>` autolinks
  // are not Zulip's syntax.
  md.linkify.set({ fuzzyLink: true, fuzzyEmail: true }).tlds(
    (md.linkify as unknown as { __opts__: { tlds: string[] } }).__opts__.tlds.filter(
      (tld) => !FILE_LIKE_TLDS.has(tld),
    ),
    false,
  );
  md.inline.ruler.disable("autolink");
  // A link's text is the address as typed (not percent-decoded).
  md.normalizeLinkText = (text) => text;
  // Any list may start right after a paragraph's line (CommonMark lets only
  // `1.` and non-empty bullets do so), as Zulip's lists do.
  const list = md.block.ruler.__rules__.find((r) => r.name === "list")?.fn;
  if (list !== undefined)
    md.block.ruler.at(
      "list",
      (state, startLine, endLine, silent) => {
        if (!silent || state.parentType !== "paragraph")
          return list(state, startLine, endLine, silent);
        state.parentType = "list";
        try {
          return list(state, startLine, endLine, silent);
        } finally {
          state.parentType = "paragraph";
        }
      },
      { alt: ["paragraph", "reference", "blockquote"] },
    );
  md.inline.ruler.disable("strikethrough");
  md.inline.ruler2.disable("strikethrough");
  md.inline.ruler.before("emphasis", "zulip_strikethrough", strikethroughRule);
  md.core.ruler.after("block", "zulip_merged_lists", mergedListsRule);
  md.core.ruler.after("inline", "zulip_one_line_emphasis", oneLineEmphasisRule);
  md.core.ruler.after("block", "zulip_empty_quotes", emptyQuoteRule);
  md.core.ruler.after("zulip_empty_quotes", "zulip_trailing_spaces", trailingSpaceRule);
  md.core.ruler.after("linkify", "zulip_linkify_bounds", linkifyBounds);
  md.core.ruler.push("zulip_text", textRule);
  md.core.ruler.push("zulip_strong_em", strongEmRule);
  // Only the schemes Zulip links (and addresses without one).
  md.validateLink = (url) => {
    const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(url.trim())?.[1]?.toLowerCase();
    return scheme === undefined || LINK_SCHEMES.has(scheme);
  };
  // Lists nest right after their item's text (`<li>text<ul>`), as Zulip's.
  for (const name of ["bullet_list_open", "ordered_list_open"] as const)
    md.renderer.rules[name] = (tokens, idx, options, _env, self) => {
      const html = self.renderToken(tokens, idx, options);
      return tokens[idx - 1]?.type === "paragraph_close" && tokens[idx - 1]?.hidden === true
        ? html.replace(/^\n/, "")
        : html;
    };
  md.renderer.rules.zulip_html = (tokens, idx) => tokens[idx]?.content ?? "";
  md.renderer.rules.text = (tokens, idx) => escapeText(tokens[idx]?.content ?? "");
  md.renderer.rules.code_inline = (tokens, idx) =>
    `<code>${escapeText(tokens[idx]?.content ?? "")}</code>`;
  md.renderer.rules.code_block = (tokens, idx) => codeBlock(tokens[idx]?.content ?? "", "");
  md.renderer.rules.fence = fenceRenderer(md);
  md.renderer.rules.s_open = () => "<del>";
  md.renderer.rules.s_close = () => "</del>";
  md.core.ruler.push("zulip_empty_links", emptyLinkRule);
};

/**
 * Core rule, after block parsing: an empty quote (`>` alone) is the text
 * `>`, as Zulip's; one followed at once by a paragraph quotes that paragraph
 * (`>\n>\ntext`).
 */
function emptyQuoteRule(state: StateCore): void {
  const tokens = state.tokens;
  for (let i = 0; i < tokens.length - 1; i++) {
    const open = tokens[i];
    const close = tokens[i + 1];
    if (open?.type !== "blockquote_open" || close?.type !== "blockquote_close") continue;
    const next = tokens[i + 2];
    if (next?.type === "paragraph_open" && next.map?.[0] === open.map?.[1]) {
      // Move the paragraph (open, inline, close) inside the quote.
      const paragraph = tokens.splice(i + 2, 3);
      tokens.splice(i + 1, 0, ...paragraph);
      continue;
    }
    const paragraphOpen = new state.Token("paragraph_open", "p", 1);
    const inline = new state.Token("inline", "", 0);
    inline.content = ">";
    inline.children = [];
    const paragraphClose = new state.Token("paragraph_close", "p", -1);
    paragraphOpen.block = true;
    paragraphClose.block = true;
    tokens.splice(i, 2, paragraphOpen, inline, paragraphClose);
  }
}

/** Core rule, after block parsing: a paragraph keeps the spaces its last line ends with, as Zulip's. */
function trailingSpaceRule(state: StateCore): void {
  let lines: string[] | undefined;
  const tokens = state.tokens;
  for (let i = 0; i < tokens.length - 1; i++) {
    const open = tokens[i];
    const inline = tokens[i + 1];
    if (open?.type !== "paragraph_open" || inline?.type !== "inline" || open.map === null) continue;
    lines ??= state.src.split("\n");
    const trailing = /[ \t]*$/.exec(lines[open.map[1] - 1] ?? "")?.[0] ?? "";
    if (trailing !== "" && !inline.content.endsWith(trailing)) inline.content += trailing;
  }
}

/** `~~text~~` at a position. */
const STRIKETHROUGH = /~~([^~\n]+?)~~(?!~)/y;

/**
 * Inline rule: `~~text~~` is struck through (Zulip's pattern: on one line,
 * not next to another `~`; spaces inside allowed).
 */
function strikethroughRule(state: StateInline, silent: boolean): boolean {
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

/** Core rule: bullet lists that follow each other are one list (`*`, `-` and `+` mixed), as Zulip's. */
function mergedListsRule(state: StateCore): void {
  const tokens = state.tokens;
  for (let i = 0; i < tokens.length - 1; i++) {
    if (tokens[i]?.type === "bullet_list_close" && tokens[i + 1]?.type === "bullet_list_open") {
      tokens.splice(i, 2);
      i -= 1;
    }
  }
}

/** Core rule: emphasis does not span lines (Zulip's); its marks across a line break stay text. */
function oneLineEmphasisRule(state: StateCore): void {
  for (const block of state.tokens) {
    const children = block.children;
    if (block.type !== "inline" || children === null) continue;
    for (let i = 0; i < children.length; i++) {
      const open = children[i];
      if (open?.type !== "strong_open" && open?.type !== "em_open") continue;
      const closeType = open.type === "strong_open" ? "strong_close" : "em_close";
      let depth = 0;
      let spansLines = false;
      let j = i + 1;
      for (; j < children.length; j++) {
        const t = children[j];
        if (t?.type === open.type) depth += 1;
        if (t?.type === "softbreak" || t?.type === "hardbreak") spansLines = true;
        if (t?.type === closeType) {
          if (depth === 0) break;
          depth -= 1;
        }
      }
      const close = children[j];
      if (!spansLines || close === undefined) continue;
      for (const mark of [open, close]) {
        mark.type = "text";
        mark.tag = "";
        mark.nesting = 0;
        mark.content = mark.markup;
      }
    }
  }
}

/** Core rule: a link without text (`[](url)`, `[  ](url)`) shows its address, as Zulip's. */
function emptyLinkRule(state: StateCore): void {
  for (const block of state.tokens) {
    const children = block.children;
    if (block.type !== "inline" || children === null) continue;
    for (let i = 0; i < children.length; i++) {
      const open = children[i];
      if (open?.type !== "link_open") continue;
      const next = children[i + 1];
      const href = String(open.attrGet("href") ?? "");
      if (next?.type === "link_close") {
        const text = new state.Token("text", "", 0);
        text.content = href;
        children.splice(i + 1, 0, text);
      } else if (
        next?.type === "text" &&
        next.content.trim() === "" &&
        children[i + 2]?.type === "link_close"
      ) {
        next.content = href;
      }
    }
  }
}

const OPTIONS: MarkdownIt.MarkdownItOptions = {
  html: false,
  linkify: true,
  breaks: true,
  typographer: false,
};

let instance: MarkdownIt.MarkdownIt | undefined;

function markdown(): MarkdownIt.MarkdownIt {
  if (instance === undefined) {
    const md = new MarkdownIt("default", OPTIONS);
    // Zulip: no reference-style links, no underlined (setext) headings.
    md.block.ruler.disable(["reference", "lheading"]);
    md.use(zulipSyntax);
    // The time limit, checked before each core step and each paragraph's inline parse.
    for (const rule of md.core.ruler.__rules__) {
      const fn = rule.fn;
      rule.fn = (state) => {
        checkDeadline(state.env as unknown as RenderEnv);
        fn(state);
      };
    }
    const parseInline = md.inline.parse.bind(md.inline);
    md.inline.parse = (text, mdi, env, tokens) => {
      checkDeadline(env as unknown as RenderEnv);
      parseInline(text, mdi, env, tokens);
    };
    instance = md;
  }
  return instance;
}

/**
 * Zulip nests a list item under the one before it when it is indented by two
 * spaces or more (CommonMark wants it under the item's text, three spaces
 * after `1. `): such items are moved under their parent's text before
 * parsing. Lines in fenced code are left alone.
 */
export function nestListItems(content: string): string {
  const lines = content.split("\n");
  /** Open items: their indentation as typed, and where their text starts once moved. */
  const stack: { typed: number; moved: number; text: number }[] = [];
  let fence: string | undefined;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? "";
    const fenceMark = /^\s*(`{3,}|~{3,})/.exec(line)?.[1];
    if (fence !== undefined) {
      if (fenceMark !== undefined && fenceMark[0] === fence[0] && fenceMark.length >= fence.length)
        fence = undefined;
      continue;
    }
    if (fenceMark !== undefined) {
      fence = fenceMark;
      stack.length = 0;
      continue;
    }
    const item = /^( *)([*+-]|\d{1,9}[.)])( +)/.exec(line);
    if (item === null) {
      // A line that is not indented (or is blank and followed by one) ends the lists.
      if (line.trim() !== "" && !/^ /.test(line)) stack.length = 0;
      continue;
    }
    const typed = item[1]?.length ?? 0;
    while (stack.length > 0 && (stack.at(-1)?.typed ?? 0) >= typed) stack.pop();
    const parent = stack.at(-1);
    // Indented four spaces or more outside a list: a code block.
    if (parent === undefined && typed >= 4) continue;
    const moved = parent === undefined ? typed : Math.max(typed, parent.text);
    const text = moved + (item[2]?.length ?? 0) + (item[3]?.length ?? 0);
    stack.push({ typed, moved, text });
    if (moved !== typed) lines[i] = " ".repeat(moved) + line.slice(typed);
  }
  return lines.join("\n");
}

/**
 * Renders a message's Markdown as Zulip does, with the realm's people,
 * groups, channels and linkifiers: the HTML (raw HTML in the source is
 * escaped, never passed through) and whom it mentions.
 */
export function renderMarkdown(
  content: string,
  context: RenderContext,
  timeLimitMs: number = RENDER_TIME_LIMIT_MS,
): RenderResult {
  const result: RenderResult = {
    html: "",
    mentionedUserIds: new Set(),
    mentionedGroupIds: new Set(),
    wildcard: undefined,
  };
  const deadline = performance.now() + timeLimitMs;
  const env: RenderEnv = {
    context,
    result,
    compiled: compileLinkifiers(context.linkifiers),
    deadline,
  };
  const md = markdown();
  const tokens = md.parse(nestListItems(content), env as unknown as MarkdownIt.Env);
  checkDeadline(env);
  result.html = md.renderer
    .render(tokens, md.options, env as unknown as MarkdownIt.Env)
    .replace(/\n$/, "");
  return result;
}

/** A render context with nothing to mention or link (descriptions before lookups, tests). */
export const EMPTY_CONTEXT: RenderContext = {
  people: [],
  groups: [],
  channels: [],
  linkifiers: [],
};

/**
 * The names (and ids, from `@**Name|id**`) a content may mention, the groups
 * it may mention and the channels it may link: what a render needs looked up
 * (at most 100 of each).
 */
export function referencedNames(content: string): {
  people: string[];
  ids: number[];
  groups: string[];
  channels: string[];
} {
  const people: string[] = [];
  const ids: number[] = [];
  for (const m of content.matchAll(/@_?\*\*([^*\n]+)\*\*/g)) {
    const name = m[1] ?? "";
    const bar = name.lastIndexOf("|");
    if (bar < 0) people.push(name);
    else {
      const id = Number(name.slice(bar + 1));
      if (Number.isInteger(id) && id > 0 && id <= 2_147_483_647) ids.push(id);
    }
  }
  const groups = [...content.matchAll(/@_?\*([^*\n]+)\*/g)].map((m) => m[1] ?? "");
  const channels = [...content.matchAll(/#\*\*([^*\n>]+)/g)].map((m) => m[1] ?? "");
  const unique = <T>(list: T[]) => [...new Set(list.filter((n) => n !== ""))].slice(0, 100);
  return {
    people: unique(people),
    ids: unique(ids),
    groups: unique(groups),
    channels: unique(channels),
  };
}
