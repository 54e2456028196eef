import {
  BoardFormatError,
  detectFormat,
  parseBoard,
  type BoardColumns,
} from "../src/snapshot/parse";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadBoard } from "../src/snapshot/load";
import { workerLoader } from "../src/snapshot/load-in-worker";
import { fileSource } from "../src/snapshot/sources";
import { Snapshot } from "../src/snapshot/snapshot";
import { demoBoardCsv } from "../src/snapshot/demo";
import { rows } from "./helpers";

const json = (value: unknown) => Buffer.from(JSON.stringify(value));
const csv = (text: string) => Buffer.from(text);

/** The usernames of parsed columns, in rank order. */
async function usernames(columns: BoardColumns): Promise<string[]> {
  const snapshot = await Snapshot.build(columns, 1n);
  return snapshot.page(0, 0).map((entry) => entry.username);
}

describe("parseBoard: JSON", () => {
  it("reads an array of rows and sorts them by rank", async () => {
    const board = rows(3).reverse();
    const columns = parseBoard(json(board), { path: "/b.json" });
    expect(await usernames(columns)).toEqual(["user1", "user2", "user3"]);
    expect(Array.from(columns.scores)).toEqual([10000, 9999, 9998]);
    expect(columns.fetchedAt).toBeNull();
  });

  it("reads the wrapper with fetched_at and ignores unknown keys", () => {
    const board = rows(2).map((row) => ({ ...row, extra: { nested: true } }));
    const columns = parseBoard(json({ fetched_at: 1_600_000_000, entries: board, note: "x" }), {});
    expect(columns.fetchedAt).toBe(1_600_000_000);
    expect(columns.count).toBe(2);
  });

  it("ranks rows by input order when no row has a rank", async () => {
    const board = rows(3)
      .map(({ rank: _rank, ...row }) => row)
      .reverse();
    expect(await usernames(parseBoard(json(board), {}))).toEqual(["user3", "user2", "user1"]);
  });

  it("records the SHA-256 of the raw bytes", () => {
    const a = parseBoard(json(rows(2)), {});
    const b = parseBoard(json(rows(2)), {});
    expect(a.digest).toMatch(/^[0-9a-f]{64}$/);
    expect(a.digest).toBe(b.digest);
    expect(parseBoard(json(rows(3)), {}).digest).not.toBe(a.digest);
  });

  const invalid: [string, unknown][] = [
    ["not JSON", "{"],
    ["an empty board", []],
    ["a row that is not an object", [1]],
    ["a wrapper without entries", { fetched_at: 1 }],
    ["a negative fetched_at", { fetched_at: -1, entries: rows(1) }],
    ["a missing field", [{ username: "a", profile_path: "", country: "", grade: "" }]],
    ["a mistyped score", rows(2).map((r) => ({ ...r, score: String(r.score) }))],
    ["a fractional score", rows(1).map((r) => ({ ...r, score: 1.5 }))],
    ["a score beyond int32", rows(1).map((r) => ({ ...r, score: 2 ** 31 }))],
    ["a mistyped country", rows(1).map((r) => ({ ...r, country: null }))],
    ["an empty username", rows(1).map((r) => ({ ...r, username: "" }))],
    ["the very same username twice", rows(2).map((r) => ({ ...r, username: "same" }))],
    ["a repeated rank", rows(2).map((r) => ({ ...r, rank: 1 }))],
    ["a rank outside 1..N", rows(2).map((r) => ({ ...r, rank: r.rank === 2 ? 3 : r.rank }))],
    ["a rank of zero", rows(1).map((r) => ({ ...r, rank: 0 }))],
    ["a string rank", rows(1).map((r) => ({ ...r, rank: "1" }))],
    [
      "a mix of ranked and unranked rows",
      rows(2).map((r, i) => (i === 0 ? r : { ...r, rank: undefined })),
    ],
  ];
  it.each(invalid)("rejects %s", (_name, value) => {
    const bytes = typeof value === "string" ? Buffer.from(value) : json(value);
    expect(() => parseBoard(bytes, { contentType: "application/json" })).toThrow(BoardFormatError);
  });

  it("allows usernames that differ only in case", async () => {
    const board = rows(2).map((r, i) => ({ ...r, username: i === 0 ? "Bob" : "bob" }));
    expect(await usernames(parseBoard(json(board), {}))).toEqual(["Bob", "bob"]);
  });

  it("rejects bytes that are not UTF-8", () => {
    expect(() => parseBoard(Buffer.from([0x5b, 0xff, 0x5d]), {})).toThrow("not valid UTF-8");
  });
});

describe("parseBoard: CSV", () => {
  it("reads RFC 4180 quoting, a BOM and columns in any order", async () => {
    const text =
      "\uFEFFscore,username,grade,country,profile_path,rank\r\n" +
      '5,"Smith, ""Jo""",A,US,/u/jo,2\r\n' +
      '9,"multi\nline",S,DE,/u/m,1\r\n';
    const columns = parseBoard(csv(text), { path: "/board.csv" });
    expect(await usernames(columns)).toEqual(["multi\nline", 'Smith, "Jo"']);
    expect(Array.from(columns.scores)).toEqual([9, 5]);
  });

  it("ranks by row order without a rank column", async () => {
    const text = "username,profile_path,country,grade,score\nb,/b,,A,1\na,/a,,A,2\n";
    expect(await usernames(parseBoard(csv(text), { contentType: "text/csv" }))).toEqual(["b", "a"]);
  });

  it("ranks by row order when the rank column is blank in every row", async () => {
    const text = "rank,username,profile_path,country,grade,score\n,b,/b,,A,1\n,a,/a,,A,2\n";
    const columns = parseBoard(csv(text), { contentType: "text/csv" });
    expect(await usernames(columns)).toEqual(["b", "a"]);
    expect(Array.from(columns.scores)).toEqual([1, 2]);
  });

  it.each([
    ["a non-integer score", "username,profile_path,country,grade,score\na,/a,US,A,1.5\n"],
    ["a missing column", "username,profile_path,country,score\na,/a,US,1\n"],
    ["a ragged row", "username,profile_path,country,grade,score\na,/a,US,A,1,extra\n"],
    ["an unterminated quote", 'username,profile_path,country,grade,score\n"a,/a,US,A,1\n'],
    [
      "a blank rank among ranked rows",
      "rank,username,profile_path,country,grade,score\n1,a,/a,,A,1\n,b,/b,,A,1\n",
    ],
    ["only a header", "username,profile_path,country,grade,score\n"],
  ])("rejects %s", (_name, text) => {
    expect(() => parseBoard(csv(text), { path: "x.csv" })).toThrow(BoardFormatError);
  });

  it("parses the bundled demo board: 10,000 ranked users", async () => {
    const columns = parseBoard(csv(demoBoardCsv(10_000)), { contentType: "text/csv" });
    expect(columns.count).toBe(10_000);
    const snapshot = await Snapshot.build(columns, 1n);
    expect(snapshot.byRank(1)?.score).toBe(1_000_000);
    expect(demoBoardCsv(10_000)).toBe(demoBoardCsv(10_000));
  });
});

describe("columns across threads", () => {
  const board = Array.from({ length: 8199 }, (_, i) => ({
    username: i % 3 === 0 ? `Ünï_${"x".repeat(i % 17)}${i}` : `u${i}`,
    profile_path: i % 5 === 0 ? "" : `/p/${i}`,
    country: ["DE", "日本", ""][i % 3] ?? "",
    grade: "A",
    score: 5 - i,
  }));

  it("keeps every field of every entry, multi-byte text included", async () => {
    const snapshot = await Snapshot.build(parseBoard(json(board), {}), 1n);
    expect(
      snapshot.page(0, 0).map(({ rank, username, profilePath, country, grade, score }) => ({
        rank,
        username,
        profile_path: profilePath,
        country,
        grade,
        score,
      })),
    ).toEqual(board.map((row, i) => ({ rank: i + 1, ...row })));
    expect(snapshot.byUsername("üNÏ_XXX3")?.rank).toBe(4);
  });

  /** A board file with `content`, as a source. */
  const boardFile = (content: Buffer) => {
    const path = join(mkdtempSync(join(tmpdir(), "board-")), "board.json");
    writeFileSync(path, content);
    return fileSource(path);
  };

  it("gives the same columns from the loading worker and process as in-line", async () => {
    const source = boardFile(json(board));
    const inline = await loadBoard(source, {}, 5000);
    const loaded = await workerLoader(0)(source, {}, 5000);
    expect(loaded).toEqual(inline);
    expect(loaded).toEqual({
      kind: "data",
      columns: parseBoard(json(board), {}),
      // The file's identity and change stamps, its validator for the next refresh.
      validators: { etag: expect.stringMatching(/^file:\d+:\d+:\d+:\d+:\d+$/) as unknown },
    });
  });

  it("rejects bad data from the loading worker and process with the parser's message", async () => {
    await expect(workerLoader(0)(boardFile(Buffer.from("[]")), {}, 5000)).rejects.toThrow(
      new BoardFormatError("the board is empty"),
    );
  });

  it("rejects a failed fetch from the loading worker and process with its reason", async () => {
    await expect(workerLoader(0)(fileSource("/nonexistent/board.json"), {}, 5000)).rejects.toThrow(
      /ENOENT: no such file or directory/,
    );
  });
});

describe("detectFormat", () => {
  it.each([
    ["[", { contentType: "text/csv" }, "csv"],
    ["a,b", { contentType: "application/json; charset=utf-8" }, "json"],
    ["a,b", { contentType: "application/vnd.board+json" }, "json"],
    ["[", { path: "/x/board.CSV" }, "csv"],
    ["a", { path: "/x/board.json" }, "json"],
    ["  \n [ ]", {}, "json"],
    ["\uFEFF{}", { contentType: "application/octet-stream" }, "json"],
    ["rank,username", {}, "csv"],
  ] as const)("tells %j with %j as %s", (text, hint, format) => {
    expect(detectFormat(text, hint)).toBe(format);
  });
});

describe("Snapshot", () => {
  it("keeps the rank index exact", async () => {
    const columns = parseBoard(json(rows(1000)), {});
    const snapshot = await Snapshot.build(columns, 5n);
    expect(snapshot.total).toBe(1000);
    expect(snapshot.page(0, 0).every((entry, i) => entry.rank === i + 1)).toBe(true);
    expect(snapshot.byRank(1000)?.username).toBe("user1000");
    expect(snapshot.byRank(1001)).toBeUndefined();
    expect(snapshot.byUsername("USER999")?.rank).toBe(999);
  });

  it("keeps its entries immutable", async () => {
    const snapshot = await Snapshot.build(parseBoard(json(rows(2)), {}), 1n);
    expect(Object.isFrozen(snapshot.page(0, 0))).toBe(true);
    expect(Object.isFrozen(snapshot.byRank(1))).toBe(true);
    expect(Object.isFrozen(snapshot.byUsername("USER2"))).toBe(true);
  });

  it("shares its data with a refetched copy that has a new fetched_at and ETag", async () => {
    const snapshot = await Snapshot.build(parseBoard(json(rows(2)), {}), 1n);
    const again = snapshot.refetched(2n);
    expect(again.data).toBe(snapshot.data);
    expect(again.byRank(2)).toEqual(snapshot.byRank(2));
    expect(again.fetchedAt).toBe(2n);
    expect(again.etag).not.toBe(snapshot.etag);
    expect(snapshot.fetchedAt).toBe(1n);
  });

  it("pages like the API: limit 0 is all, past the end is empty", async () => {
    const snapshot = await Snapshot.build(parseBoard(json(rows(5)), {}), 1n);
    expect(snapshot.page(3, 0).map((e) => e.rank)).toEqual([4, 5]);
    expect(snapshot.page(0, 2).map((e) => e.rank)).toEqual([1, 2]);
    expect(snapshot.page(5, 1)).toEqual([]);
  });
});
