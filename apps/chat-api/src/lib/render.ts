import { LRUCache } from "lru-cache";
import { EMPTY_CONTEXT } from "./markdown/references";
import { render } from "./render-pool";

/** `text` with HTML's special characters escaped. */
export function escapeHtml(text: string): string {
  return text
    .replaceAll("&", "&amp;")
    .replaceAll("<", "&lt;")
    .replaceAll(">", "&gt;")
    .replaceAll('"', "&quot;")
    .replaceAll("'", "&#x27;");
}

/** Characters of texts and HTML the plain renders' cache holds at most. */
const PLAIN_CACHE_CHARS = 4_000_000;

/**
 * Plain renders by text. A text whose render fails is kept as its escaped
 * paragraph, so that a description that cannot render costs one render, not
 * one for every reader.
 */
const plainRenders = new LRUCache<string, string>({
  maxSize: PLAIN_CACHE_CHARS,
  sizeCalculation: (html, text) => html.length + text.length + 1,
  fetchMethod: async (text) => {
    try {
      return (await render(text, EMPTY_CONTEXT, undefined)).html;
    } catch {
      return `<p>${escapeHtml(text)}</p>`;
    }
  },
});

/**
 * HTML of a text with nothing of a realm to refer to (no mentions or channel
 * links resolved, no linkifiers): Markdown as Zulip renders it, on the render
 * pool, from a cache by text (concurrent readers share one render). Realm
 * texts read often (folder and realm descriptions, reminders) and the demo
 * data use it; messages and channel descriptions use `actions/render.ts`.
 */
export async function renderPlain(text: string): Promise<string> {
  return (await plainRenders.fetch(text)) ?? `<p>${escapeHtml(text)}</p>`;
}

/**
 * Renders a text a person gives (a folder's description, a reminder's note)
 * as {@link renderPlain} will, for `requester`'s share of the pool: refused
 * (`Unable to render message`, or 429) when it cannot render, so that what
 * is stored renders.
 */
export async function checkPlain(text: string, requester: number): Promise<void> {
  plainRenders.set(text, (await render(text, EMPTY_CONTEXT, requester)).html);
}
