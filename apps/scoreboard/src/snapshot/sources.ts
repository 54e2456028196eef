import { readFile, stat } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import type { FormatHint } from "./parse";
import { demoBoardCsv } from "./demo";

/** Validators of the last accepted HTTP fetch, sent back to ask "changed since?". */
export interface Validators {
  etag?: string | undefined;
  lastModified?: string | undefined;
}

/**
 * What one fetch brought: new data, or word that the data has not changed:
 * `not-modified` from an HTTP upstream (304), `unchanged` from a file or the
 * demo board (the same bytes as the data last accepted, so not read again).
 */
export type FetchResult =
  | { kind: "data"; bytes: Uint8Array; hint: FormatHint; validators: Validators }
  | { kind: "not-modified" }
  | { kind: "unchanged" };

/**
 * Where the board comes from: plain data, so that it can be handed to the
 * process that fetches and parses it (`load-in-child.ts`); `description`
 * names it in logs.
 */
export type BoardSource =
  | { kind: "http"; url: string; description: string }
  | { kind: "file"; path: string; description: string }
  | { kind: "demo"; description: string };

/** An upstream that answered with an HTTP error status. */
export class UpstreamStatusError extends Error {
  override readonly name = "UpstreamStatusError";
}

/** A board file on local disk, read whole at each refresh where it changed. */
export const fileSource = (path: string): BoardSource => ({
  kind: "file",
  path,
  description: path,
});

/** A board served over HTTP(S), fetched conditionally. */
export const httpSource = (url: string): BoardSource => ({ kind: "http", url, description: url });

/** The bundled, deterministic demo board of 10,000 users. */
export const demoSource = (): BoardSource => ({ kind: "demo", description: "bundled demo board" });

/** The source that `SCOREBOARD_SOURCE` names: absolute path, `file://` or `http(s)://` URL, or unset. */
export function sourceFromSetting(setting: string | undefined): BoardSource {
  if (setting === undefined || setting === "") return demoSource();
  if (/^https?:\/\//i.test(setting)) return httpSource(setting);
  if (/^file:\/\//i.test(setting)) return fileSource(fileURLToPath(setting));
  return fileSource(setting);
}

/** The demo board's validator: it never changes. */
const DEMO_ETAG = "demo";

/** Fetches the board of `source`; `since` holds the validators of the last accepted data. */
export async function fetchSource(
  source: BoardSource,
  signal: AbortSignal,
  since: Validators,
): Promise<FetchResult> {
  switch (source.kind) {
    case "file": {
      // The file's identity and change stamps stand for its bytes, as an ETag does: the
      // same device, inode, size and change times as the data last accepted are the same
      // data, neither read nor parsed again. A file replaced (renamed over, as a
      // Kubernetes ConfigMap's is) or written changes them.
      const { dev, ino, size, mtimeNs, ctimeNs } = await stat(source.path, { bigint: true });
      const etag = `file:${dev}:${ino}:${size}:${mtimeNs}:${ctimeNs}`;
      if (since.etag === etag) return { kind: "unchanged" };
      const bytes = await readFile(source.path, { signal });
      return { kind: "data", bytes, hint: { path: source.path }, validators: { etag } };
    }
    case "demo":
      // The same board every time: made and parsed once.
      if (since.etag === DEMO_ETAG) return { kind: "unchanged" };
      return {
        kind: "data",
        bytes: Buffer.from(demoBoardCsv(10_000), "utf8"),
        hint: { contentType: "text/csv" },
        validators: { etag: DEMO_ETAG },
      };
    case "http":
      return fetchHttp(source.url, signal, since);
  }
}

async function fetchHttp(
  url: string,
  signal: AbortSignal,
  since: Validators,
): Promise<FetchResult> {
  const headers: Record<string, string> = {
    accept: "application/json, text/csv;q=0.9, */*;q=0.1",
  };
  if (since.etag !== undefined) headers["if-none-match"] = since.etag;
  if (since.lastModified !== undefined) headers["if-modified-since"] = since.lastModified;
  const response = await fetch(url, { headers, signal, redirect: "follow" });
  if (response.status === 304) {
    await response.body?.cancel();
    return { kind: "not-modified" };
  }
  if (!response.ok) {
    await response.body?.cancel();
    throw new UpstreamStatusError(`upstream answered HTTP ${response.status}`);
  }
  // Read whole: this runs in the loading process, where joining a large body
  // holds no one's event loop.
  const bytes = new Uint8Array(await response.arrayBuffer());
  return {
    kind: "data",
    bytes,
    hint: {
      contentType: response.headers.get("content-type") ?? undefined,
      path: new URL(url).pathname,
    },
    validators: {
      etag: response.headers.get("etag") ?? undefined,
      lastModified: response.headers.get("last-modified") ?? undefined,
    },
  };
}
