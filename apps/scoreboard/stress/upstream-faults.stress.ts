/**
 * The upstream failing while callers read: down (connection refused), slow past
 * the fetch timeout, garbage, a truncated body, a shrunken board. Through every
 * fault, eight callers keep reading from the last good snapshot without one
 * error, health stays SERVING, and the metrics and logs show each failed
 * refresh; then a healthy upstream's new board replaces the snapshot.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import {
  Health,
  HealthCheckResponse_ServingStatus as Status,
} from "@repo/proto-gen/grpc/health/v1";
import { boardCsv } from "../bench/boards";
import { scoreboardClient, transportNamed } from "../test/helpers";
import { type ScoreboardProcess, sample, startScoreboard, upstream } from "./support";

jest.setTimeout(120_000);

const GOOD = boardCsv(1000);
const NEWER = boardCsv(1200);
const csv = { "content-type": "text/csv" };

let site: Awaited<ReturnType<typeof upstream>>;
let scoreboard: ScoreboardProcess;

beforeAll(async () => {
  site = await upstream((_req, res) => res.writeHead(200, csv).end(GOOD));
  scoreboard = await startScoreboard({
    SCOREBOARD_SOURCE: site.url,
    SCOREBOARD_REFRESH_SECONDS: "0.5",
    // Twice what a healthy fetch needs on a loaded machine, half the slow upstream's 2 s.
    SCOREBOARD_FETCH_TIMEOUT_SECONDS: "1",
  });
});

afterAll(async () => {
  scoreboard.child.kill("SIGKILL");
  await site.close();
});

const refreshes = async (outcome: string) =>
  sample(await scoreboard.metrics(), `scoreboard_snapshot_refreshes_total{outcome="${outcome}"}`);

describe("upstream faults under read load", () => {
  it("serves the last good snapshot through every fault, and takes a healthy upstream's board after", async () => {
    const board = scoreboardClient(transportNamed(scoreboard.baseUrl, "gRPC (h2c)"));
    const health = createClient(Health, createGrpcTransport({ baseUrl: scoreboard.baseUrl }));
    // The first board is served.
    for (
      let i = 0;
      (await board.listScoreboard({ limit: 1 }).catch(() => undefined)) === undefined;
      i++
    ) {
      if (i > 100) throw new Error("no snapshot after 10 s");
      await sleep(100);
    }

    let reading = true;
    let calls = 0;
    const errors: string[] = [];
    const totals = new Set<number>();
    const reader = async (): Promise<void> => {
      while (reading) {
        try {
          const rank = 1 + (calls % 1000);
          const entry = await board.getByRank({ rank });
          // boardCsv(n) scores rank r with n - r: the score tells which board answered.
          totals.add(entry.score + rank);
          calls++;
        } catch (error) {
          errors.push(String(error));
        }
      }
    };
    const readers = Array.from({ length: 8 }, () => reader());

    const faults: [string, () => Promise<void> | void, string, RegExp][] = [
      ["down", () => site.down(), "failed", /ECONNREFUSED|fetch failed|connect/i],
      [
        "slow past the timeout",
        async () => {
          await site.up();
          site.set((_req, res) => {
            setTimeout(() => res.writeHead(200, csv).end(GOOD), 2000);
          });
        },
        "failed",
        /timed out/,
      ],
      [
        "garbage",
        () =>
          site.set((_req, res) => res.writeHead(200, csv).end(Buffer.from([0, 1, 2, 255, 254]))),
        "rejected",
        /not valid UTF-8/,
      ],
      [
        "a truncated body",
        () =>
          site.set((_req, res) => {
            res.writeHead(200, { ...csv, "content-length": String(GOOD.length) });
            res.write(GOOD.subarray(0, GOOD.length / 2));
            setTimeout(() => res.destroy(), 20);
          }),
        "failed",
        /terminated|closed|socket|aborted/i,
      ],
      [
        "a shrunken board",
        () => site.set((_req, res) => res.writeHead(200, csv).end(boardCsv(100))),
        "rejected",
        /board shrank from 1000 to 100 entries/,
      ],
    ];
    const seen: Record<string, { counted: number; logged: string[]; health: Status }> = {};
    for (const [name, apply, outcome, reason] of faults) {
      const countedBefore = await refreshes(outcome);
      const logsBefore = scoreboard.logs.length;
      await apply();
      await sleep(2500);
      const logged = scoreboard.logs
        .slice(logsBefore)
        .filter((l) => l.msg === "scoreboard refresh failed")
        .map((l) => String(l.reason));
      seen[name] = {
        counted: (await refreshes(outcome)) - countedBefore,
        logged,
        health: (await health.check({ service: "" })).status,
      };
      // (A fetch of the phase before may still end, and be logged, early in this one.)
      expect([name, logged.some((r) => reason.test(r))]).toEqual([name, true]);
    }

    // A healthy upstream with a new board: it replaces the snapshot.
    site.set((_req, res) => res.writeHead(200, csv).end(NEWER));
    const deadline = Date.now() + 10_000;
    while ((await board.listScoreboard({ limit: 1 })).total !== 1200) {
      if (Date.now() > deadline) throw new Error("the new board never replaced the snapshot");
      await sleep(100);
    }
    await sleep(500);
    reading = false;
    await Promise.all(readers);

    process.stdout.write(
      `${JSON.stringify({ test: "scoreboard upstream faults", calls, seen })}\n`,
    );
    expect(errors).toEqual([]);
    expect(calls).toBeGreaterThan(1000);
    for (const [name, { counted, health: status }] of Object.entries(seen)) {
      expect([name, counted > 0, status]).toEqual([name, true, Status.SERVING]);
    }
    // Reads saw the good board throughout, then the new one.
    expect([...totals].sort()).toEqual([1000, 1200]);
    expect(sample(await scoreboard.metrics(), "scoreboard_snapshot_entries")).toBe(1200);
  });
});
