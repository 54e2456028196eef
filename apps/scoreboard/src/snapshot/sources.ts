import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import type { FormatHint } from "./parse";
import { demoBoardCsv } from "./demo";

/** Validators of the last accepted HTTP fetch, sent back to ask "changed since?". */
export interface Validators {
  etag?: string | undefined;
  lastModified?: string | undefined;
}

/** What one fetch brought: new data, or word that the data has not changed. */
export type FetchResult =
  | { kind: "data"; bytes: Uint8Array; hint: FormatHint; validators: Validators }
  | { kind: "not-modified" };

/** Where the board comes from. */
export interface BoardSource {
  /** For logs: the file or URL. */
  readonly description: string;
  /** Fetches the board; `since` holds the validators of the last accepted data. */
  fetch(signal: AbortSignal, since: Validators): Promise<FetchResult>;
}

/** An upstream that answered with an HTTP error status. */
export class UpstreamStatusError extends Error {
  override readonly name = "UpstreamStatusError";
}

/** A board file on local disk, read whole on each refresh. */
export function fileSource(path: string): BoardSource {
  return {
    description: path,
    async fetch(signal) {
      const bytes = await readFile(path, { signal });
      return { kind: "data", bytes, hint: { path }, validators: {} };
    },
  };
}

/** A board served over HTTP(S), fetched conditionally. */
export function httpSource(url: string): BoardSource {
  return {
    description: url,
    async fetch(signal, since) {
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
    },
  };
}

/** The bundled, deterministic demo board of 10,000 users. */
export function demoSource(): BoardSource {
  return {
    description: "bundled demo board",
    fetch() {
      const bytes = Buffer.from(demoBoardCsv(10_000), "utf8");
      return Promise.resolve({
        kind: "data",
        bytes,
        hint: { contentType: "text/csv" },
        validators: {},
      });
    },
  };
}

/** The source that `SCOREBOARD_SOURCE` names: absolute path, `file://` or `http(s)://` URL, or unset. */
export function sourceFromSetting(setting: string | undefined): BoardSource {
  if (setting === undefined || setting === "") return demoSource();
  if (/^https?:\/\//i.test(setting)) return httpSource(setting);
  if (/^file:\/\//i.test(setting)) return fileSource(fileURLToPath(setting));
  return fileSource(setting);
}
