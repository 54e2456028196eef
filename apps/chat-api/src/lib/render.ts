import { EMPTY_CONTEXT, renderMarkdown } from "./markdown";

/** `text` with HTML's special characters escaped. */
export function escapeHtml(text: string): string {
  return text
    .replaceAll("&", "&amp;")
    .replaceAll("<", "&lt;")
    .replaceAll(">", "&gt;")
    .replaceAll('"', "&quot;")
    .replaceAll("'", "&#x27;");
}

/**
 * HTML of a text with nothing of a realm to refer to (no mentions or channel
 * links resolved, no linkifiers): Markdown as Zulip renders it. Realm texts
 * read often (folder and realm descriptions) and the demo data use it;
 * messages and channel descriptions use `actions/render.ts`.
 */
export function renderPlain(text: string): string {
  return renderMarkdown(text, EMPTY_CONTEXT).html;
}
