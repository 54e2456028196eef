import { Code, ConnectError, type HandlerContext, type ServiceImpl } from "@connectrpc/connect";
import type {
  Entry,
  GetByRankRequest,
  GetByUsernameRequest,
  ListScoreboardRequest,
  ListScoreboardResponse,
  ScoreboardService,
} from "@repo/proto-gen/scoreboard/v1";
import { cacheHeaders } from "./http-cache";
import type { Snapshot } from "./snapshot/snapshot";
import type { SnapshotStore } from "./snapshot/store";

/** Longest username echoed in full in a NOT_FOUND message; longer ones are cut (gRPC sends it as a header). */
const ECHO_MAX_CHARS = 100;

/** `username` as quoted in a message: JSON-escaped, cut after {@link ECHO_MAX_CHARS} code points. */
function quoted(username: string): string {
  const points = Array.from(username);
  return points.length <= ECHO_MAX_CHARS
    ? JSON.stringify(username)
    : `${JSON.stringify(points.slice(0, ECHO_MAX_CHARS).join(""))}...`;
}

function invalid(message: string): ConnectError {
  return new ConnectError(message, Code.InvalidArgument);
}

/** The snapshot to answer from; UNAVAILABLE before the first load. */
function loaded(store: SnapshotStore): Snapshot {
  const snapshot = store.current();
  if (snapshot === undefined) {
    throw new ConnectError("the scoreboard is not loaded yet", Code.Unavailable);
  }
  return snapshot;
}

/** A page of the board, with the snapshot it was read from. */
export interface PageAnswer {
  snapshot: Snapshot;
  entries: readonly Entry[];
}

/** One entry, with the snapshot it was read from. */
export interface EntryAnswer {
  snapshot: Snapshot;
  entry: Entry;
}

/** A single-entry call's answer before its entry is read: the snapshot and the entry's rank. */
export interface RankAnswer {
  snapshot: Snapshot;
  rank: number;
}

/** The entry a {@link RankAnswer} names (the snapshot has it). */
function entryAt({ snapshot, rank }: RankAnswer): EntryAnswer {
  const entry = snapshot.byRank(rank);
  if (entry === undefined) throw new Error(`rank ${String(rank)} is not in the snapshot`);
  return { snapshot, entry };
}

/**
 * The three RPCs as plain functions of the store, shared by the Connect routes
 * and the gRPC fast lane: each reads one snapshot, once, or throws the
 * contract's ConnectError.
 */
export const scoreboardCalls = {
  /**
   * Which entries `listScoreboard` answers, as indexes [start, end) of the
   * snapshot, without reading them (for callers that cache encoded pages).
   */
  pageRange(
    store: SnapshotStore,
    { offset, limit }: Pick<ListScoreboardRequest, "offset" | "limit">,
  ): { snapshot: Snapshot; start: number; end: number } {
    if (offset < 0) throw invalid("offset must not be negative");
    if (limit < 0) throw invalid("limit must not be negative");
    const snapshot = loaded(store);
    const start = Math.min(offset, snapshot.total);
    const end = limit === 0 ? snapshot.total : Math.min(snapshot.total, offset + limit);
    return { snapshot, start, end };
  },

  listScoreboard(
    store: SnapshotStore,
    { offset, limit }: Pick<ListScoreboardRequest, "offset" | "limit">,
  ): PageAnswer {
    const { snapshot } = scoreboardCalls.pageRange(store, { offset, limit });
    return { snapshot, entries: snapshot.page(offset, limit) };
  },

  /** GetByRank's checks and errors: the snapshot and the rank it has. */
  rankOfRank(store: SnapshotStore, { rank }: Pick<GetByRankRequest, "rank">): RankAnswer {
    if (rank < 1) throw invalid("rank must be 1 or greater");
    const snapshot = loaded(store);
    if (rank > snapshot.total) throw new ConnectError(`rank ${rank} not found`, Code.NotFound);
    return { snapshot, rank };
  },

  /** GetByUsername's checks and errors: the snapshot and the rank of the username's entry. */
  rankOfUsername(
    store: SnapshotStore,
    { username }: Pick<GetByUsernameRequest, "username">,
  ): RankAnswer {
    if (username === "") throw invalid("username must not be empty");
    const snapshot = loaded(store);
    const rank = snapshot.rankOf(username);
    if (rank === undefined) {
      throw new ConnectError(`username ${quoted(username)} not found`, Code.NotFound);
    }
    return { snapshot, rank };
  },

  getByRank(store: SnapshotStore, request: Pick<GetByRankRequest, "rank">): EntryAnswer {
    return entryAt(scoreboardCalls.rankOfRank(store, request));
  },

  getByUsername(
    store: SnapshotStore,
    request: Pick<GetByUsernameRequest, "username">,
  ): EntryAnswer {
    return entryAt(scoreboardCalls.rankOfUsername(store, request));
  },
};

/**
 * Connect GET responses are cacheable: the snapshot's ETag, and a max-age that
 * ends at the next refresh.
 */
function cacheable(context: HandlerContext, snapshot: Snapshot, store: SnapshotStore): void {
  if (context.requestMethod !== "GET") return;
  for (const [name, value] of Object.entries(cacheHeaders(snapshot, store))) {
    context.responseHeader.set(name, value);
  }
}

/** scoreboard.v1.ScoreboardService for connect-es: each call reads one snapshot, once. */
export function createScoreboardService(
  store: SnapshotStore,
): ServiceImpl<typeof ScoreboardService> {
  return {
    listScoreboard(request, context): ListScoreboardResponse {
      const { snapshot, entries } = scoreboardCalls.listScoreboard(store, request);
      cacheable(context, snapshot, store);
      return {
        $typeName: "scoreboard.v1.ListScoreboardResponse",
        entries: entries as Entry[],
        total: snapshot.total,
        fetchedAt: snapshot.fetchedAt,
      };
    },

    getByRank(request, context): Entry {
      const { snapshot, entry } = scoreboardCalls.getByRank(store, request);
      cacheable(context, snapshot, store);
      return entry;
    },

    getByUsername(request, context): Entry {
      const { snapshot, entry } = scoreboardCalls.getByUsername(store, request);
      cacheable(context, snapshot, store);
      return entry;
    },
  };
}
