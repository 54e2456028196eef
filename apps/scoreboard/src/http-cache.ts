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
