import { createHash } from "node:crypto";
import { parse as parseCsv } from "csv-parse/sync";
import { foldHash, foldUsername } from "./fold";

/** Why a fetched board was rejected: the message goes to the refresh log. */
export class BoardFormatError extends Error {
  override readonly name = "BoardFormatError";
}

/** How the fetch described its data, to tell JSON from CSV. */
export interface FormatHint {
  /** HTTP `Content-Type`, when the source is HTTP. */
  contentType?: string | undefined;
  /** File path or URL path, for its extension. */
  path?: string | undefined;
}

/** One validated row; its rank is its position once sorted. */
export interface BoardRow {
  username: string;
  profile_path: string;
  country: string;
  grade: string;
  score: number;
}

/**
 * A parsed board in columns, built to cross from the loading process as raw
 * bytes: numbers and text in typed arrays (`load-reply.ts`). Every string is
 * stored as UTF-8 in `text`, one after the other: entry i (rank i + 1) owns the
 * strings `STRINGS_PER_ENTRY * i ..` of `offsets` (username, profile_path,
 * country, grade, folded username), and string n is the bytes
 * `text[offsets[n] .. offsets[n + 1]]` (`offsets` has one more element, the
 * end). A reader decodes only the strings a call asks for: a snapshot holds no
 * JavaScript string of its board, so building and dropping one gives the
 * garbage collector nothing to do.
 *
 * The folded-username index is built here too, off the event loop: `foldOrder`
 * lists entry indexes by {@link foldHash} of their folded username (ties in
 * rank order), and `foldHashes[p]` is the hash of entry `foldOrder[p]`, so a
 * lookup is a binary search with no per-entry object anywhere.
 */
export interface BoardColumns {
  count: number;
  scores: Int32Array;
  text: Uint8Array;
  offsets: Uint32Array;
  foldHashes: Uint32Array;
  foldOrder: Uint32Array;
  /** The wrapper's `fetched_at`, when the data carried one. */
  fetchedAt: number | null;
  /** SHA-256 of the raw bytes, hex. */
  digest: string;
}

/** Strings stored per entry in {@link BoardColumns}. */
export const STRINGS_PER_ENTRY = 5;

const INT32_MIN = -2147483648;
const INT32_MAX = 2147483647;
const STRING_FIELDS = ["username", "profile_path", "country", "grade"] as const;

type RawRow = Record<string, unknown>;

/** Tells JSON from CSV: Content-Type, else extension, else the first non-blank character. */
export function detectFormat(text: string, hint: FormatHint): "json" | "csv" {
  const type = hint.contentType?.split(";")[0]?.trim().toLowerCase() ?? "";
  if (type === "application/json" || type.endsWith("+json")) return "json";
  if (type === "text/csv" || type === "application/csv") return "csv";
  const path = hint.path?.toLowerCase() ?? "";
  if (path.endsWith(".json")) return "json";
  if (path.endsWith(".csv")) return "csv";
  const first = /\S/.exec(text.replace(/^\uFEFF/, ""))?.[0];
  return first === "[" || first === "{" ? "json" : "csv";
}

function parseJsonBoard(text: string): { rows: RawRow[]; fetchedAt: number | null } {
  let value: unknown;
  try {
    value = JSON.parse(text.replace(/^\uFEFF/, ""));
  } catch {
    throw new BoardFormatError("body is not valid JSON");
  }
  let rows: unknown = value;
  let fetchedAt: number | null = null;
  if (value !== null && typeof value === "object" && !Array.isArray(value)) {
    const wrapper = value as Record<string, unknown>;
    rows = wrapper.entries;
    if (wrapper.fetched_at !== undefined) {
      const at = wrapper.fetched_at;
      if (typeof at !== "number" || !Number.isSafeInteger(at) || at < 0) {
        throw new BoardFormatError("fetched_at must be a non-negative integer (Unix seconds)");
      }
      fetchedAt = at;
    }
  }
  if (!Array.isArray(rows))
    throw new BoardFormatError("expected an array of rows or {entries: [...]}");
  rows.forEach((row, i) => {
    if (row === null || typeof row !== "object" || Array.isArray(row)) {
      throw new BoardFormatError(`row ${i + 1}: not an object`);
    }
  });
  return { rows: rows as RawRow[], fetchedAt };
}

function parseCsvInteger(value: unknown): unknown {
  return typeof value === "string" && /^-?\d+$/.test(value) ? Number(value) : value;
}

function parseCsvBoard(text: string): { rows: RawRow[]; fetchedAt: null } {
  let records: Record<string, string>[];
  try {
    records = parseCsv(text, { bom: true, columns: true, skip_empty_lines: true });
  } catch (error) {
    throw new BoardFormatError(`CSV: ${error instanceof Error ? error.message : "unreadable"}`);
  }
  // Each record becomes its row in place: a copy of a million records would be
  // a million more objects alive at the parse's peak. (An empty rank is no rank.)
  const rows: RawRow[] = records;
  for (const row of rows) {
    row.score = parseCsvInteger(row.score);
    if (row.rank !== undefined) row.rank = row.rank === "" ? undefined : parseCsvInteger(row.rank);
  }
  return { rows, fetchedAt: null };
}

function isInt32(value: unknown): value is number {
  return (
    typeof value === "number" && Number.isInteger(value) && value >= INT32_MIN && value <= INT32_MAX
  );
}

/**
 * Validates rows and orders them by rank (explicit ranks, or input order when
 * none has one). The rows themselves are ordered, not copies of them: a
 * million-entry board makes no second million objects.
 */
export function validateRows(rows: readonly RawRow[]): BoardRow[] {
  if (rows.length === 0) throw new BoardFormatError("the board is empty");
  if (rows.length > INT32_MAX) throw new BoardFormatError("the board is too large");
  const ranked = rows.filter((row) => row.rank !== undefined).length;
  if (ranked !== 0 && ranked !== rows.length) {
    throw new BoardFormatError("some rows have a rank and some do not");
  }
  const sorted: (BoardRow | undefined)[] = new Array<BoardRow | undefined>(rows.length);
  const usernames = new Set<string>();
  rows.forEach((row, i) => {
    const where = `row ${i + 1}`;
    for (const field of STRING_FIELDS) {
      if (typeof row[field] !== "string")
        throw new BoardFormatError(`${where}: ${field} must be a string`);
    }
    if (!isInt32(row.score)) throw new BoardFormatError(`${where}: score must be a 32-bit integer`);
    const username = row.username as string;
    if (username === "") throw new BoardFormatError(`${where}: username is empty`);
    if (usernames.has(username))
      throw new BoardFormatError(`${where}: username "${username}" repeated`);
    usernames.add(username);
    const rank = ranked === 0 ? i + 1 : row.rank;
    if (!isInt32(rank) || rank < 1 || rank > rows.length) {
      throw new BoardFormatError(`${where}: rank must be an integer from 1 to ${rows.length}`);
    }
    if (sorted[rank - 1] !== undefined)
      throw new BoardFormatError(`${where}: rank ${rank} repeated`);
    sorted[rank - 1] = row as RawRow & BoardRow; // every field checked above
  });
  return sorted as BoardRow[];
}

/** Packs validated rows into {@link BoardColumns}. */
export function toColumns(
  rows: readonly BoardRow[],
  fetchedAt: number | null,
  digest: string,
): BoardColumns {
  const folded = rows.map((row) => foldUsername(row.username));
  const strings = (i: number): string[] => {
    const row = rows[i] as BoardRow;
    return [row.username, row.profile_path, row.country, row.grade, folded[i] ?? ""];
  };
  // Where each string starts, then one write of each at its place.
  const offsets = new Uint32Array(rows.length * STRINGS_PER_ENTRY + 1);
  let size = 0;
  let n = 0;
  for (let i = 0; i < rows.length; i++) {
    for (const value of strings(i)) {
      offsets[n++] = size;
      size += Buffer.byteLength(value, "utf8");
    }
  }
  offsets[n] = size;
  const text = new Uint8Array(new ArrayBuffer(size));
  const writer = Buffer.from(text.buffer);
  n = 0;
  for (let i = 0; i < rows.length; i++) {
    for (const value of strings(i)) writer.write(value, offsets[n++] ?? 0, "utf8");
  }
  const scores = Int32Array.from(rows, (row) => row.score);
  const hashes = Uint32Array.from(folded, foldHash);
  const foldOrder = Uint32Array.from(rows, (_, i) => i).sort(
    (a, b) => (hashes[a] ?? 0) - (hashes[b] ?? 0) || a - b,
  );
  const foldHashes = foldOrder.map((i) => hashes[i] ?? 0);
  return {
    count: rows.length,
    scores,
    text,
    offsets,
    foldHashes,
    foldOrder,
    fetchedAt,
    digest,
  };
}

/**
 * The rows of a fetched board, decoded and parsed. The decoded text lives only
 * in here: it is garbage (as large as the body) once the rows are read.
 */
function parseRows(
  bytes: Uint8Array,
  hint: FormatHint,
): { rows: RawRow[]; fetchedAt: number | null } {
  const decoder = new TextDecoder("utf-8", { fatal: true });
  let text: string;
  try {
    text = decoder.decode(bytes);
  } catch {
    throw new BoardFormatError("body is not valid UTF-8");
  }
  return detectFormat(text, hint) === "json" ? parseJsonBoard(text) : parseCsvBoard(text);
}

/** Parses, validates and packs a fetched board; throws {@link BoardFormatError}. */
export function parseBoard(bytes: Uint8Array, hint: FormatHint): BoardColumns {
  const digest = createHash("sha256").update(bytes).digest("hex");
  const { rows, fetchedAt } = parseRows(bytes, hint);
  return toColumns(validateRows(rows), fetchedAt, digest);
}
