/** HTML for message content until there is a Markdown renderer: the escaped text in a paragraph. */
export function renderPlainText(content: string): string {
  const escaped = content
    .replaceAll("&", "&amp;")
    .replaceAll("<", "&lt;")
    .replaceAll(">", "&gt;")
    .replaceAll('"', "&quot;")
    .replaceAll("'", "&#x27;");
  return `<p>${escaped}</p>`;
}
