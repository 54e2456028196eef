import { Code, ConnectError, type HandlerContext, type ServiceImpl } from "@connectrpc/connect";
import type {
  Entry,
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

/** scoreboard.v1.ScoreboardService: each call reads one snapshot, once. */
export function createScoreboardService(
  store: SnapshotStore,
): ServiceImpl<typeof ScoreboardService> {
  return {
    listScoreboard({ offset, limit }, context): ListScoreboardResponse {
      if (offset < 0) throw invalid("offset must not be negative");
      if (limit < 0) throw invalid("limit must not be negative");
      const snapshot = loaded(store);
      cacheable(context, snapshot, store);
      return {
        $typeName: "scoreboard.v1.ListScoreboardResponse",
        entries: snapshot.page(offset, limit) as Entry[],
        total: snapshot.total,
        fetchedAt: snapshot.fetchedAt,
      };
    },

    getByRank({ rank }, context): Entry {
      if (rank < 1) throw invalid("rank must be 1 or greater");
      const snapshot = loaded(store);
      const entry = snapshot.byRank(rank);
      if (entry === undefined) throw new ConnectError(`rank ${rank} not found`, Code.NotFound);
      cacheable(context, snapshot, store);
      return entry;
    },

    getByUsername({ username }, context): Entry {
      if (username === "") throw invalid("username must not be empty");
      const snapshot = loaded(store);
      const entry = snapshot.byUsername(username);
      if (entry === undefined) {
        throw new ConnectError(`username ${quoted(username)} not found`, Code.NotFound);
      }
      cacheable(context, snapshot, store);
      return entry;
    },
  };
}
