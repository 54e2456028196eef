/**
 * A soak: the scoreboard (its bundled 10,000-entry demo board) under a steady
 * gRPC load for three minutes (h2load over loopback, stopping by itself), after
 * 20 s of warm-up at the same rates. Zero errors (HTTP and grpc-status, from
 * the service's own counters), and memory flat: the heap after the run within
 * 10 % of the heap after warm-up, each read right after a full collection.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { create, toBinary } from "@bufbuild/protobuf";
import { ensureH2load, freePort, h2load, heapAfterGc } from "@repo/bench-kit";
import { GetByRankRequestSchema, ListScoreboardRequestSchema } from "@repo/proto-gen/scoreboard/v1";
import { type ScoreboardProcess, startScoreboard } from "./support";

const SOAK_SECONDS = Number(process.env.STRESS_SOAK_SECONDS ?? 180);
const WARM_UP_SECONDS = 20;

jest.setTimeout((SOAK_SECONDS + WARM_UP_SECONDS + 120) * 1000);

let scoreboard: ScoreboardProcess;
let inspectPort: number;

beforeAll(async () => {
  await ensureH2load();
  inspectPort = await freePort();
  scoreboard = await startScoreboard({}, [`--inspect=127.0.0.1:${inspectPort}`]);
});

afterAll(() => {
  scoreboard.child.kill("SIGKILL");
});

/** A gRPC request body: the 5-byte prefix and the message. */
function frame(message: Uint8Array): Uint8Array {
  const body = new Uint8Array(5 + message.length);
  new DataView(body.buffer).setUint32(1, message.length);
  body.set(message, 5);
  return body;
}

/** scoreboard_requests_total by method and code. */
async function calls(): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  for (const match of (await scoreboard.metrics()).matchAll(
    /^scoreboard_requests_total\{method="(\w+)",code="(\w+)"\} (\d+)$/gm,
  ))
    counts.set(`${match[1]} ${match[2]}`, Number(match[3]));
  return counts;
}

describe("a three-minute soak", () => {
  it("answers every call at a steady rate, with a flat heap", async () => {
    while (!(await scoreboard.metrics()).includes("scoreboard_snapshot_entries 10000"))
      await sleep(100);
    const grpc = { "content-type": "application/grpc", te: "trailers" };
    const path = `${scoreboard.baseUrl}/scoreboard.v1.ScoreboardService/`;
    const mix = [
      {
        url: `${path}GetByRank`,
        body: frame(toBinary(GetByRankRequestSchema, create(GetByRankRequestSchema, { rank: 42 }))),
        rate: 200,
      },
      {
        url: `${path}ListScoreboard`,
        body: frame(
          toBinary(
            ListScoreboardRequestSchema,
            create(ListScoreboardRequestSchema, { offset: 500, limit: 100 }),
          ),
        ),
        rate: 100,
      },
    ];
    // h2load's rate is per connection: two connections at half the rate each.
    const load = (seconds: number) =>
      Promise.all(
        mix.map((m) =>
          h2load({
            url: m.url,
            body: m.body,
            headers: grpc,
            seconds,
            warmUpSeconds: 0,
            connections: 2,
            streams: 1,
            rate: m.rate / 2,
          }),
        ),
      );

    const warm = await load(WARM_UP_SECONDS);
    const afterWarmUp = await heapAfterGc(inspectPort);
    const before = await calls();
    const soak = await load(SOAK_SECONDS);
    const afterRun = await heapAfterGc(inspectPort);
    const after = await calls();

    const served = [...after].map(([key, n]) => [key, n - (before.get(key) ?? 0)] as const);
    const planned = mix.reduce((sum, m) => sum + m.rate, 0) * SOAK_SECONDS;
    const answered = soak.reduce((sum, r) => sum + r.samples.length, 0);
    process.stdout.write(
      `${JSON.stringify({
        test: "scoreboard soak",
        seconds: SOAK_SECONDS,
        planned,
        answered,
        served: Object.fromEntries(served),
        p99Ms: Math.max(...soak.map((r) => r.p99Ms)),
        heapAfterWarmUpMiB: +(afterWarmUp / 2 ** 20).toFixed(1),
        heapAfterRunMiB: +(afterRun / 2 ** 20).toFixed(1),
        heapChange: +(afterRun / afterWarmUp - 1).toFixed(3),
      })}\n`,
    );
    expect(warm.concat(soak).map((r) => r.failures)).toEqual([0, 0, 0, 0]);
    // Every call the service answered was OK, and the load got the rate it asked for.
    expect(served.filter(([key, n]) => !key.endsWith(" OK") && n > 0)).toEqual([]);
    expect(answered).toBeGreaterThan(planned * 0.95);
    expect(afterRun).toBeLessThanOrEqual(afterWarmUp * 1.1);
    expect(scoreboard.child.exitCode).toBeNull();
  });
});
