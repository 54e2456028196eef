/**
 * What the server's own thread needs of Markdown, without the renderer
 * (markdown-it, KaTeX: loaded by the render pool's threads only): the names a
 * content refers to, looked up before its render, and the empty context.
 */
import type { RenderContext } from "./context";
import { emoticons, unicodeEmojiCode } from "../emoji";

/** A render context with nothing to mention or link (descriptions before lookups, tests). */
export const EMPTY_CONTEXT: RenderContext = {
  people: [],
  groups: [],
  channels: [],
  linkifiers: [],
  customEmoji: [],
  translateEmoticons: false,
};

/**
 * The names (and ids, from `@**Name|id**`) a content may mention, the groups
 * it may mention, the channels it may link and the custom emoji it may show,
 * and whether it holds an emoticon: what a render needs looked up (at most
 * 100 of each).
 */
export function referencedNames(content: string): {
  people: string[];
  ids: number[];
  groups: string[];
  channels: string[];
  emoji: string[];
  emoticons: boolean;
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
  // `:name:` that is not a unicode emoji's name may be a custom emoji's.
  const emoji = [...content.matchAll(/:(?=([a-z0-9_+-]{1,60}):)/g)]
    .map((m) => m[1] ?? "")
    .filter((name) => unicodeEmojiCode(name) === undefined);
  const unique = <T>(list: T[]) => [...new Set(list.filter((n) => n !== ""))].slice(0, 100);
  return {
    people: unique(people),
    ids: unique(ids),
    groups: unique(groups),
    channels: unique(channels),
    emoji: unique(emoji),
    emoticons: [...emoticons().keys()].some((e) => content.includes(e)),
  };
}
