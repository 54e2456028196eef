import { Code, ConnectError } from "@connectrpc/connect";
import { SnapshotStore } from "../src/snapshot/store";
import {
  type Row,
  type Running,
  rows,
  scoreboardClient,
  snapshotOf,
  startServer,
  transportNamed,
  transports,
} from "./helpers";

const FETCHED_AT = 1_700_000_123n;

/** Usernames chosen for the case-insensitive rule: collisions, NFKC and combining marks. */
const board: Row[] = [
  ...rows(5),
  { rank: 6, username: "Alice", profile_path: "/u/Alice", country: "FR", grade: "S", score: 50 },
  { rank: 7, username: "alice", profile_path: "/u/alice", country: "FR", grade: "B", score: 40 },
  { rank: 8, username: "ＢＯＢ", profile_path: "/u/bob", country: "JP", grade: "C", score: 30 },
  { rank: 9, username: "Émile", profile_path: "/u/emile", country: "FR", grade: "C", score: 20 },
  { rank: 10, username: "İpek", profile_path: "/u/ipek", country: "TR", grade: "D", score: 10 },
];

async function rejection(promise: Promise<unknown>): Promise<ConnectError> {
  try {
    await promise;
  } catch (error) {
    return ConnectError.from(error);
  }
  throw new Error("expected the call to fail");
}

let running: Running;
let empty: Running;

beforeAll(async () => {
  const store = new SnapshotStore();
  store.swap(await snapshotOf(board, FETCHED_AT));
  store.nextRefreshAt = Date.now() + 120_000;
  running = await startServer(store);
  empty = await startServer();
});

afterAll(async () => {
  await running.shutdown();
  await empty.shutdown();
});

describe.each(Object.keys(transports("http://x")))("over %s", (name) => {
  const client = () => scoreboardClient(transportNamed(running.baseUrl, name));
  const emptyClient = () => scoreboardClient(transportNamed(empty.baseUrl, name));

  it("lists a page ordered by rank with total and fetched_at", async () => {
    const page = await client().listScoreboard({ offset: 2, limit: 3 });
    expect(page.entries.map((e) => [e.rank, e.username])).toEqual([
      [3, "user3"],
      [4, "user4"],
      [5, "user5"],
    ]);
    expect(page.entries[0]).toMatchObject({
      profilePath: "/u/user3",
      country: "DE",
      grade: "A",
      score: 9998,
    });
    expect(page.total).toBe(10);
    expect(page.fetchedAt).toBe(FETCHED_AT);
  });

  it("returns every entry from the offset when limit is 0", async () => {
    const page = await client().listScoreboard({ offset: 7, limit: 0 });
    expect(page.entries.map((e) => e.rank)).toEqual([8, 9, 10]);
  });

  it("returns the whole board for offset 0 and limit 0", async () => {
    expect((await client().listScoreboard({})).entries).toHaveLength(10);
  });

  it("answers an offset past the end with no entries, but total and fetched_at", async () => {
    for (const offset of [10, 11, 2147483647]) {
      const page = await client().listScoreboard({ offset, limit: 5 });
      expect(page.entries).toEqual([]);
      expect(page.total).toBe(10);
      expect(page.fetchedAt).toBe(FETCHED_AT);
    }
  });

  it("clips a page that runs past the end", async () => {
    const page = await client().listScoreboard({ offset: 8, limit: 2147483647 });
    expect(page.entries.map((e) => e.rank)).toEqual([9, 10]);
  });

  it.each([
    [{ offset: -1, limit: 1 }, "offset"],
    [{ offset: 0, limit: -1 }, "limit"],
    [{ offset: -2147483648, limit: 0 }, "offset"],
  ])("rejects %j with INVALID_ARGUMENT naming %s", async (request, field) => {
    const error = await rejection(client().listScoreboard(request));
    expect(error.code).toBe(Code.InvalidArgument);
    expect(error.rawMessage).toContain(field);
  });

  it("gets an entry by rank", async () => {
    expect(await client().getByRank({ rank: 6 })).toMatchObject({
      rank: 6,
      username: "Alice",
      score: 50,
    });
  });

  it.each([0, -1, -2147483648])("rejects rank %d with INVALID_ARGUMENT", async (rank) => {
    const error = await rejection(client().getByRank({ rank }));
    expect(error.code).toBe(Code.InvalidArgument);
    expect(error.rawMessage).toContain("rank");
  });

  it("answers NOT_FOUND for a rank past the end", async () => {
    const error = await rejection(client().getByRank({ rank: 11 }));
    expect(error.code).toBe(Code.NotFound);
    expect(error.rawMessage).toBe("rank 11 not found");
  });

  it.each([
    ["user3", 3],
    ["USER3", 3],
    ["alice", 7], // exact-case match wins over the better-ranked "Alice"
    ["Alice", 6],
    ["ALICE", 6], // no exact match: the better-ranked one
    ["aLiCe", 6],
    ["bob", 8], // NFKC folds full-width letters
    ["ｂｏｂ", 8],
    ["E\u0301MILE", 9], // a combining accent composes under NFKC
    ["émile", 9],
    ["i\u0307pek", 10], // "İ".toLowerCase() is "i" + combining dot, in every locale
    ["İPEK", 10],
  ])("finds %j case-insensitively at rank %d", async (username, rank) => {
    expect((await client().getByUsername({ username })).rank).toBe(rank);
  });

  it("rejects an empty username with INVALID_ARGUMENT", async () => {
    const error = await rejection(client().getByUsername({ username: "" }));
    expect(error.code).toBe(Code.InvalidArgument);
    expect(error.rawMessage).toContain("username");
  });

  it("answers NOT_FOUND for an unknown username, quoting it", async () => {
    const error = await rejection(client().getByUsername({ username: 'nobody "here"' }));
    expect(error.code).toBe(Code.NotFound);
    expect(error.rawMessage).toBe('username "nobody \\"here\\"" not found');
  });

  it("answers UNAVAILABLE before any snapshot is loaded", async () => {
    for (const call of [
      emptyClient().listScoreboard({}),
      emptyClient().getByRank({ rank: 1 }),
      emptyClient().getByUsername({ username: "user1" }),
    ]) {
      expect((await rejection(call)).code).toBe(Code.Unavailable);
    }
  });

  it("still rejects bad arguments before any snapshot is loaded", async () => {
    expect((await rejection(emptyClient().getByRank({ rank: 0 }))).code).toBe(Code.InvalidArgument);
  });
});
