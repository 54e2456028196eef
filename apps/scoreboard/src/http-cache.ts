import type { Snapshot } from "./snapshot/snapshot";
import type { SnapshotStore } from "./snapshot/store";

/** `ETag` and `Cache-Control` of a GET answered from `snapshot`: fresh until the next refresh. */
export function cacheHeaders(
  snapshot: Snapshot,
  store: SnapshotStore,
  now = Date.now(),
): {
  etag: string;
  "cache-control": string;
} {
  const maxAge = Math.max(0, Math.floor((store.nextRefreshAt - now) / 1000));
  return { etag: snapshot.etag, "cache-control": `public, max-age=${maxAge}` };
}

/** Whether an `If-None-Match` header names `etag` (weak comparison, as RFC 9110 says for GET). */
export function etagMatches(ifNoneMatch: string, etag: string): boolean {
  if (ifNoneMatch.trim() === "*") return true;
  const bare = etag.replace(/^W\//, "");
  return ifNoneMatch.split(",").some((tag) => tag.trim().replace(/^W\//, "") === bare);
}

/** The second {@link httpDate} last dated (its start, ms since the epoch), and its text. */
let datedSecond = Number.NaN;
let dateText = "";

/**
 * The `date` header for `now` (ms since the epoch), as Node writes it
 * (`toUTCString`, RFC 9110's IMF-fixdate), made again only when the second
 * changes, either way. The fast lanes give it with their headers: Node's
 * `respond` adds a missing `date` into its copy of the headers, and in this
 * process that one addition was 3% of a GetByRank's CPU samples, against 1%
 * in a bare server (docs/benchmarks.md, issue 54).
 */
export function httpDate(now = Date.now()): string {
  const second = now - (now % 1000);
  if (second !== datedSecond) {
    datedSecond = second;
    dateText = new Date(now).toUTCString();
  }
  return dateText;
}
