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
  | { kind: "data"; bytes: BoardBytes; hint: FormatHint; validators: Validators }
  | { kind: "not-modified" };

/** A fetched body: whole, or in the blocks it was read into (joined by the parser, off the event loop). */
export type BoardBytes = Uint8Array | readonly Uint8Array[];

/** Size of the blocks an HTTP body is read into. */
const BLOCK_BYTES = 1024 * 1024;

/**
 * Reads a response body into blocks of {@link BLOCK_BYTES}, each copy small:
 * joining 50 MiB in one piece (as `arrayBuffer()` does) holds the event loop
 * for over 100 ms, so the parser's worker joins the blocks instead.
 */
async function readBlocks(body: ReadableStream<Uint8Array>): Promise<Uint8Array[]> {
  const blocks: Uint8Array[] = [];
  let block = new Uint8Array(BLOCK_BYTES);
  let used = 0;
  for await (const chunk of body) {
    let from = 0;
    while (from < chunk.length) {
      if (used === block.length) {
        blocks.push(block);
        block = new Uint8Array(BLOCK_BYTES);
        used = 0;
      }
      const n = Math.min(block.length - used, chunk.length - from);
      block.set(chunk.subarray(from, from + n), used);
      used += n;
      from += n;
    }
  }
  blocks.push(block.slice(0, used));
  return blocks;
}

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
      const bytes = response.body === null ? [] : await readBlocks(response.body);
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
