/**
 * JSON text made beforehand (a poll's events, each serialized once for all
 * the queues that receive it), written as it is where it appears at the top
 * level of an answer ({@link stringify}).
 */
export class JsonText {
  constructor(readonly text: string) {}
}

/** The JSON array of `texts` (each an element's JSON text). */
export const jsonArray = (texts: readonly string[]): JsonText =>
  new JsonText(`[${texts.join(",")}]`);

/**
 * `JSON.stringify(body)`, except that a {@link JsonText} among the top-level
 * fields of an object is written as its text: the same bytes as if it had
 * been the value it was made from.
 */
export function stringify(body: unknown): string {
  if (
    body === null ||
    typeof body !== "object" ||
    !Object.values(body).some((value) => value instanceof JsonText)
  )
    return JSON.stringify(body);
  const fields: string[] = [];
  for (const [name, value] of Object.entries(body)) {
    const text =
      value instanceof JsonText ? value.text : (JSON.stringify(value) as string | undefined);
    // As JSON.stringify: fields whose value has no JSON form (undefined, functions) are left out.
    if (text !== undefined) fields.push(`${JSON.stringify(name)}:${text}`);
  }
  return `{${fields.join(",")}}`;
}
