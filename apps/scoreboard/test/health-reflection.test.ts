import { setTimeout as sleep } from "node:timers/promises";
import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import {
  Health,
  HealthCheckResponse_ServingStatus as Status,
} from "@repo/proto-gen/grpc/health/v1";
import { SnapshotStore } from "../src/snapshot/store";
import { type Running, rows, snapshotOf, startServer } from "./helpers";

const run = promisify(execFile);
const BUF = join(__dirname, "../node_modules/.bin/buf");

/** Runs `buf curl` with no .proto file: everything it knows comes from reflection. */
async function bufCurl(args: string[]): Promise<string> {
  const { stdout } = await run(BUF, ["curl", "--http2-prior-knowledge", ...args], {
    timeout: 30_000,
  });
  return stdout;
}

let running: Running;

beforeAll(async () => {
  const store = new SnapshotStore();
  store.swap(await snapshotOf(rows(5)));
  running = await startServer(store);
});

afterAll(() => running.shutdown());

describe("server reflection through buf curl", () => {
  it("lists every method of every service without the .proto file", async () => {
    const out = await bufCurl(["--list-methods", running.baseUrl]);
    expect(out.trim().split("\n")).toEqual([
      "grpc.health.v1.Health/Check",
      "grpc.health.v1.Health/List",
      "grpc.health.v1.Health/Watch",
      "grpc.reflection.v1.ServerReflection/ServerReflectionInfo",
      "grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo",
      "scoreboard.v1.ScoreboardService/GetByRank",
      "scoreboard.v1.ScoreboardService/GetByUsername",
      "scoreboard.v1.ScoreboardService/ListScoreboard",
    ]);
  });

  it.each(["grpc-v1", "grpc-v1alpha"])(
    "calls GetByRank through %s reflection",
    async (protocol) => {
      const out = await bufCurl([
        "--reflect-protocol",
        protocol,
        "-d",
        '{"rank": 2}',
        `${running.baseUrl}/scoreboard.v1.ScoreboardService/GetByRank`,
      ]);
      expect(JSON.parse(out)).toEqual({
        rank: 2,
        username: "user2",
        profilePath: "/u/user2",
        country: "JP",
        grade: "A",
        score: 9999,
      });
    },
  );

  it.each(["grpc", "connect", "grpcweb"])(
    "calls ListScoreboard over the %s protocol",
    async (protocol) => {
      const out = await bufCurl([
        "--protocol",
        protocol,
        "-d",
        '{"offset": 4}',
        `${running.baseUrl}/scoreboard.v1.ScoreboardService/ListScoreboard`,
      ]);
      expect(JSON.parse(out)).toMatchObject({
        total: 5,
        fetchedAt: "1700000000",
        entries: [{ rank: 5 }],
      });
    },
  );

  it("checks health through reflection", async () => {
    const out = await bufCurl(["-d", "{}", `${running.baseUrl}/grpc.health.v1.Health/Check`]);
    expect(JSON.parse(out)).toEqual({ status: "SERVING" });
  });
});

describe("grpc.health.v1.Health", () => {
  const health = () => createClient(Health, createGrpcTransport({ baseUrl: running.baseUrl }));

  it("reports the server and the scoreboard service", async () => {
    expect((await health().check({ service: "" })).status).toBe(Status.SERVING);
    expect((await health().check({ service: "scoreboard.v1.ScoreboardService" })).status).toBe(
      Status.SERVING,
    );
    const { statuses } = await health().list({});
    expect(Object.keys(statuses).sort()).toEqual(["", "scoreboard.v1.ScoreboardService"]);
  });

  it("answers NOT_FOUND for a service it does not know", async () => {
    await expect(health().check({ service: "nope.v1.Nope" })).rejects.toMatchObject({
      code: Code.NotFound,
    });
  });

  it("is NOT_SERVING until the first snapshot, then Watch sees SERVING", async () => {
    const cold = await startServer();
    try {
      const client = createClient(Health, createGrpcTransport({ baseUrl: cold.baseUrl }));
      expect((await client.check({ service: "" })).status).toBe(Status.NOT_SERVING);
      const seen: Status[] = [];
      const watch = (async () => {
        for await (const { status } of client.watch({
          service: "scoreboard.v1.ScoreboardService",
        })) {
          seen.push(status);
          if (status === Status.SERVING) return;
        }
      })();
      await sleep(100);
      cold.store.swap(await snapshotOf(rows(1)));
      await watch;
      expect(seen).toEqual([Status.NOT_SERVING, Status.SERVING]);
    } finally {
      await cold.shutdown();
    }
  });

  it("reports SERVICE_UNKNOWN to a Watch of an unknown service", async () => {
    const controller = new AbortController();
    const seen: Status[] = [];
    const ended = (async () => {
      for await (const { status } of health().watch(
        { service: "nope" },
        { signal: controller.signal },
      )) {
        seen.push(status);
        controller.abort();
      }
    })();
    await expect(ended).rejects.toMatchObject({ code: Code.Canceled });
    expect(seen).toEqual([Status.SERVICE_UNKNOWN]);
  });

  it("turns NOT_SERVING and ends Watch streams when the server drains", async () => {
    const draining = await startServer();
    draining.store.swap(await snapshotOf(rows(1)));
    const client = createClient(Health, createGrpcTransport({ baseUrl: draining.baseUrl }));
    const seen: Status[] = [];
    const watch = (async () => {
      try {
        for await (const { status } of client.watch({ service: "" })) seen.push(status);
      } catch (error) {
        return ConnectError.from(error);
      }
      return undefined;
    })();
    await sleep(100);
    await draining.shutdown(2000);
    const error = await watch;
    expect(seen).toEqual([Status.SERVING, Status.NOT_SERVING]);
    expect(error).toBeUndefined();
  });
});
