/** Core rules that make markdown-it's output Zulip's: emoji and linkifiers in text, link bounds, emphasis, lists, quotes. */
import { emojiNameOfCode, emoticons, unicodeEmojiCode } from "../emoji";
import { type RenderEnv, type StateCore, type Token } from "./context";
import { emojiSpan } from "./html";
import { splitLinkified } from "./linkifiers";

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
export function textRule(state: StateCore): void {
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

let emoticonRun: RegExp | undefined;

/**
 * Zulip's emoticons where it translates them: between the start or end of
 * the text, white space, or one of `,.;?!()[]"'`; or one emoji run.
 */
function emojiOrEmoticon(): RegExp {
  if (emoticonRun !== undefined) return emoticonRun;
  const bound = `[,.;?!()\\[\\] "'\n\t]`;
  const alternatives = [...emoticons().keys()]
    .sort((a, b) => b.length - a.length)
    .map((e) => e.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))
    .join("|");
  emoticonRun = new RegExp(
    `(?<=^|${bound})(?:${alternatives})(?=$|${bound})|${EMOJI_RUN.source}`,
    "gu",
  );
  return emoticonRun;
}

/** The emoji name and code of an emoji run or (translated) emoticon, if it is one. */
function emojiOf(text: string, translate: boolean): { name: string; code: string } | undefined {
  const emoticon = emoticons().get(text);
  if (emoticon !== undefined) {
    const code = translate ? unicodeEmojiCode(emoticon) : undefined;
    return code === undefined ? undefined : { name: emoticon, code };
  }
  const code = codeOf(text);
  const name = emojiNameOfCode(code);
  return name === undefined ? undefined : { name, code };
}

/** `text` as text tokens and emoji spans (and emoticons as emoji, for those who translate them). */
function emojified(state: StateCore, text: string): Token[] {
  const env = state.env as unknown as RenderEnv;
  const translate = env.context.translateEmoticons;
  const tokens: Token[] = [];
  let last = 0;
  const pushText = (content: string) => {
    if (content === "") return;
    const token = new state.Token("text", "", 0);
    token.content = content;
    tokens.push(token);
  };
  for (const match of text.matchAll(translate ? emojiOrEmoticon() : EMOJI_RUN)) {
    const found = emojiOf(match[0], translate);
    if (found === undefined) continue;
    const { name, code } = found;
    pushText(text.slice(last, match.index));
    const span = new state.Token("zulip_html", "", 0);
    span.content = emojiSpan(name, code);
    tokens.push(span);
    last = match.index + match[0].length;
  }
  pushText(text.slice(last));
  return tokens;
}

/** Top-level domains Zulip does not link without a scheme: they are file extensions too. */
export const FILE_LIKE_TLDS = new Set(["java", "md", "mov", "py", "zip"]);

/** URL schemes a link may have (Zulip's list); anything else stays text. */
export const LINK_SCHEMES = new Set([
  "http",
  "https",
  "ftp",
  "mailto",
  "tel",
  "sms",
  "irc",
  "xmpp",
]);

/**
 * Core rule, after linkify: an address found in text is a link only where
 * Zulip's would be (after a space, a quote, `(`, `,`, `:` or `<`, or at the
 * start), and without a trailing colon.
 */
export function linkifyBounds(state: StateCore): void {
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
export function strongEmRule(state: StateCore): void {
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

/**
 * Core rule, after block parsing: an empty quote (`>` alone) is the text
 * `>`, as Zulip's; one followed at once by a paragraph quotes that paragraph
 * (`>\n>\ntext`).
 */
export function emptyQuoteRule(state: StateCore): void {
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
export function trailingSpaceRule(state: StateCore): void {
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

/** Core rule: bullet lists that follow each other are one list (`*`, `-` and `+` mixed), as Zulip's. */
export function mergedListsRule(state: StateCore): void {
  const tokens = state.tokens;
  for (let i = 0; i < tokens.length - 1; i++) {
    if (tokens[i]?.type === "bullet_list_close" && tokens[i + 1]?.type === "bullet_list_open") {
      tokens.splice(i, 2);
      i -= 1;
    }
  }
}

/** Core rule: emphasis does not span lines (Zulip's); its marks across a line break stay text. */
export function oneLineEmphasisRule(state: StateCore): void {
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
export function emptyLinkRule(state: StateCore): void {
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
