/** Length in code points, as Zulip (Python) counts characters. */
export function codePoints(text: string): number {
  return text.length - (text.match(/[\uD800-\uDBFF][\uDC00-\uDFFF]/g)?.length ?? 0);
}
