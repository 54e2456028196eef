/** multipart/form-data bodies for tests that upload files. */

/** One part of a multipart body: a field, or a file when it has a filename. */
export interface Part {
  name: string;
  filename?: string;
  type?: string;
  data: string | Buffer;
}

export const BOUNDARY = "----chat-test-boundary-7d93";

/** A multipart/form-data body of `parts`, with its Content-Type header. */
export function multipart(parts: readonly Part[]): {
  body: Buffer;
  headers: Record<string, string>;
} {
  const chunks: Buffer[] = [];
  for (const part of parts) {
    const disposition =
      part.filename === undefined
        ? `form-data; name="${part.name}"`
        : `form-data; name="${part.name}"; filename="${part.filename}"`;
    const head = [`--${BOUNDARY}`, `Content-Disposition: ${disposition}`];
    if (part.type !== undefined) head.push(`Content-Type: ${part.type}`);
    chunks.push(
      Buffer.from(`${head.join("\r\n")}\r\n\r\n`),
      Buffer.from(part.data),
      Buffer.from("\r\n"),
    );
  }
  chunks.push(Buffer.from(`--${BOUNDARY}--\r\n`));
  return {
    body: Buffer.concat(chunks),
    headers: { "content-type": `multipart/form-data; boundary=${BOUNDARY}` },
  };
}
