import { type BoardColumns, parseBoard } from "./parse";
import { type BoardSource, type Validators, fetchSource } from "./sources";

/**
 * What one load brought: parsed columns with their validators, "not modified"
 * (an HTTP 304), or "unchanged" (a file or the demo board, the same bytes as
 * the data last accepted; neither read nor parsed).
 */
export type LoadResult =
  | { kind: "data"; columns: BoardColumns; validators: Validators }
  | { kind: "not-modified" }
  | { kind: "unchanged" };

/**
 * Fetches and parses one board: {@link loadBoard} on the calling thread, or
 * `workerLoader` in a worker thread and a process of its own (production). Rejects with
 * `BoardFormatError` (`parse.ts`) when the data is bad and {@link LoadFailure} when
 * the fetch failed, each with the reason the refresh log shows.
 */
export type BoardLoader = (
  source: BoardSource,
  since: Validators,
  timeoutMs: number,
) => Promise<LoadResult>;

/** A load that failed for another reason than bad data (the upstream down, slow, an HTTP error, a body cut short); the message says why. */
export class LoadFailure extends Error {
  override readonly name = "LoadFailure";
}

/** The distinct buffers under the columns, to transfer them across threads without a copy. */
export function columnBuffers(columns: BoardColumns): ArrayBuffer[] {
  const { text, offsets, scores, foldHashes, foldOrder } = columns;
  const buffers = [text, offsets, scores, foldHashes, foldOrder].map(
    (a) => a.buffer as ArrayBuffer,
  );
  return [...new Set(buffers)];
}

/**
 * Fetches `source` within `timeoutMs` (headers and body), then parses it;
 * `beforeParse` runs between the two (the loading process lowers its priority there).
 */
export async function loadBoard(
  source: BoardSource,
  since: Validators,
  timeoutMs: number,
  beforeParse: () => void = () => undefined,
): Promise<LoadResult> {
  let fetched;
  try {
    fetched = await fetchSource(source, AbortSignal.timeout(timeoutMs), since);
  } catch (error) {
    throw new LoadFailure(describeFetchError(error, timeoutMs));
  }
  if (fetched.kind !== "data") return fetched;
  beforeParse();
  return {
    kind: "data",
    columns: parseBoard(fetched.bytes, fetched.hint),
    validators: fetched.validators,
  };
}

/** The reason a fetch failed, as the log gives it: "fetch failed: connect ECONNREFUSED ...". */
function describeFetchError(error: unknown, timeoutMs: number): string {
  // Checked by shape, not instanceof: fetch rejects with DOMExceptions and errors from other realms.
  const { name, message, cause } = (error ?? {}) as {
    name?: unknown;
    message?: unknown;
    cause?: unknown;
  };
  if (name === "TimeoutError") return `fetch timed out after ${timeoutMs / 1000} s`;
  if (typeof message !== "string") return String(error);
  const causeMessage = (cause as { message?: unknown } | undefined)?.message;
  return typeof causeMessage === "string" ? `${message}: ${causeMessage}` : message;
}
