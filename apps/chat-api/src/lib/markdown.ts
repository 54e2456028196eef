import MarkdownIt from "markdown-it";
import {
  RENDER_TIME_LIMIT_MS,
  type RenderContext,
  type RenderEnv,
  type RenderResult,
  checkDeadline,
} from "./markdown/context";
import { codeBlock, escapeText } from "./markdown/html";
import { compileLinkifiers } from "./markdown/linkifiers";
import {
  channelLinkRule,
  emojiRule,
  mathBlock,
  mentionRule,
  strikethroughRule,
  texRule,
  timeRule,
} from "./markdown/inline-rules";
import {
  FILE_LIKE_TLDS,
  LINK_SCHEMES,
  emptyLinkRule,
  emptyQuoteRule,
  linkifyBounds,
  mergedListsRule,
  oneLineEmphasisRule,
  strongEmRule,
  textRule,
  trailingSpaceRule,
} from "./markdown/core-rules";

export {
  type LinkableChannel,
  type Linkifier,
  type MentionablePerson,
  RENDER_TIME_LIMIT_MS,
  RENDER_TIMEOUT_MESSAGE,
  type RenderContext,
  type RenderResult,
} from "./markdown/context";
export { channelSlug, hashEncode } from "./markdown/html";
export { EMPTY_CONTEXT, referencedNames } from "./markdown/references";

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
