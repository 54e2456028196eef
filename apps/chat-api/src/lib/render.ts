/** `text` with HTML's special characters escaped. */
export function escapeHtml(text: string): string {
  return text
    .replaceAll("&", "&amp;")
    .replaceAll("<", "&lt;")
    .replaceAll(">", "&gt;")
    .replaceAll('"', "&quot;")
    .replaceAll("'", "&#x27;");
}

/** HTML for message content until there is a Markdown renderer: the escaped text in a paragraph. */
export function renderPlainText(content: string): string {
  return `<p>${escapeHtml(content)}</p>`;
}
