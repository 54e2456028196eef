import { join } from "node:path";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import { SnapshotStore } from "../src/snapshot/store";
import { type Running, rows, snapshotOf, startServer } from "./helpers";

/** A second, independent implementation: grpc-js with stubs built from the .proto file at run time. */
const definition = protoLoader.loadSync(
  join(__dirname, "../../../proto/scoreboard/v1/scoreboard.proto"),
  {
    keepCase: true,
    longs: String,
    defaults: true,
  },
);
const loaded = grpc.loadPackageDefinition(definition) as unknown as {
  scoreboard: { v1: { ScoreboardService: grpc.ServiceClientConstructor } };
};

interface WireEntry {
  rank: number;
  username: string;
  profile_path: string;
  country: string;
  grade: string;
  score: number;
}
type Callback<T> = (error: grpc.ServiceError | null, value?: T) => void;
interface StubClient extends grpc.Client {
  ListScoreboard(
    request: object,
    callback: Callback<{ entries: WireEntry[]; total: number; fetched_at: string }>,
  ): void;
  GetByRank(request: object, callback: Callback<WireEntry>): void;
  GetByUsername(request: object, callback: Callback<WireEntry>): void;
}

function call<T>(
  invoke: (callback: Callback<T>) => void,
): Promise<{ error: grpc.ServiceError | null; value?: T }> {
  return new Promise((resolve) => {
    invoke((error, value) => resolve({ error, value }));
  });
}

let running: Running;
let empty: Running;
let client: StubClient;
let emptyClient: StubClient;

beforeAll(async () => {
  const store = new SnapshotStore();
  store.swap(await snapshotOf(rows(12), 1_700_000_777n));
  running = await startServer(store);
  empty = await startServer();
  const Ctor = loaded.scoreboard.v1.ScoreboardService;
  client = new Ctor(
    `127.0.0.1:${running.port}`,
    grpc.credentials.createInsecure(),
  ) as unknown as StubClient;
  emptyClient = new Ctor(
    `127.0.0.1:${empty.port}`,
    grpc.credentials.createInsecure(),
  ) as unknown as StubClient;
});

afterAll(async () => {
  client.close();
  emptyClient.close();
  await running.shutdown();
  await empty.shutdown();
});

describe("a grpc-js client built from the .proto file", () => {
  it("lists a page with snake_case fields and an int64 fetched_at", async () => {
    const { error, value } = await call<{
      entries: WireEntry[];
      total: number;
      fetched_at: string;
    }>((cb) => client.ListScoreboard({ offset: 10, limit: 0 }, cb));
    expect(error).toBeNull();
    expect(value?.total).toBe(12);
    expect(value?.fetched_at).toBe("1700000777");
    expect(value?.entries.map((e) => e.username)).toEqual(["user11", "user12"]);
    expect(value?.entries[0]).toEqual({
      rank: 11,
      username: "user11",
      profile_path: "/u/user11",
      country: "DE",
      grade: "A",
      score: 9990,
    });
  });

  it("answers past the end with an empty page", async () => {
    const { value } = await call<{ entries: WireEntry[]; total: number }>((cb) =>
      client.ListScoreboard({ offset: 99, limit: 1 }, cb),
    );
    expect(value?.entries).toEqual([]);
    expect(value?.total).toBe(12);
  });

  it.each([
    ["ListScoreboard", { offset: -1 }, grpc.status.INVALID_ARGUMENT, /offset/],
    ["ListScoreboard", { limit: -5 }, grpc.status.INVALID_ARGUMENT, /limit/],
    ["GetByRank", { rank: 0 }, grpc.status.INVALID_ARGUMENT, /rank/],
    ["GetByRank", { rank: 13 }, grpc.status.NOT_FOUND, /^rank 13 not found$/],
    ["GetByUsername", { username: "" }, grpc.status.INVALID_ARGUMENT, /username/],
    ["GetByUsername", { username: "ghost" }, grpc.status.NOT_FOUND, /^username "ghost" not found$/],
  ] as const)("%s(%j) fails with status %d", async (method, request, code, message) => {
    const { error } = await call<unknown>((cb) => client[method](request, cb));
    expect(error?.code).toBe(code);
    expect(error?.details).toMatch(message);
  });

  it("finds a username case-insensitively", async () => {
    const { value } = await call<WireEntry>((cb) =>
      client.GetByUsername({ username: "USER7" }, cb),
    );
    expect(value?.rank).toBe(7);
  });

  it("gets UNAVAILABLE before a snapshot is loaded", async () => {
    const { error } = await call<WireEntry>((cb) => emptyClient.GetByRank({ rank: 1 }, cb));
    expect(error?.code).toBe(grpc.status.UNAVAILABLE);
  });
});
