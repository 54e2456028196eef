/**
 * SIGTERM under load: a call whose request is still arriving finishes and is
 * answered, new connections are refused at once, the process exits within its
 * grace period, and no call the server began is cut: every call either
 * succeeded or was refused before it reached the service.
 */
import { setTimeout as sleep } from "node:timers/promises";
import http2 from "node:http2";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { connectionRefused } from "@repo/bench-kit";
import { GetByRankRequestSchema, EntrySchema } from "@repo/proto-gen/scoreboard/v1";
import { scoreboardClient, transportNamed } from "../test/helpers";
import { type ScoreboardProcess, sample, startScoreboard } from "./support";

jest.setTimeout(120_000);

const GRACE_SECONDS = 10;
/** Calls answered before the signal. */
const UNDER_LOAD = 500;
let scoreboard: ScoreboardProcess;

beforeAll(async () => {
  // The bundled demo board (10,000 entries), as `pnpm start` serves it.
  scoreboard = await startScoreboard({ SCOREBOARD_SHUTDOWN_GRACE_SECONDS: String(GRACE_SECONDS) });
});

afterAll(() => {
  scoreboard.child.kill("SIGKILL");
});

describe("SIGTERM under load", () => {
  it("finishes the calls it began, refuses new connections and exits in time", async () => {
    const board = scoreboardClient(transportNamed(scoreboard.baseUrl, "gRPC (h2c)"));
    while ((await board.listScoreboard({ limit: 1 }).catch(() => undefined)) === undefined)
      await sleep(100);

    // A gRPC call whose request message is still arriving when the signal comes.
    const session = http2.connect(scoreboard.baseUrl);
    const message = toBinary(GetByRankRequestSchema, create(GetByRankRequestSchema, { rank: 7 }));
    const frame = Buffer.alloc(5 + message.length);
    frame.writeUInt32BE(message.length, 1);
    frame.set(message, 5);
    const slow = session.request({
      ":method": "POST",
      ":path": "/scoreboard.v1.ScoreboardService/GetByRank",
      "content-type": "application/grpc",
      te: "trailers",
    });
    const chunks: Buffer[] = [];
    slow.on("data", (chunk: Buffer) => chunks.push(chunk));
    const trailers = new Promise<http2.IncomingHttpHeaders>((resolve, reject) => {
      slow.once("trailers", resolve);
      slow.once("error", reject);
    });
    slow.write(frame.subarray(0, 3));

    // Eight callers as fast as they can.
    let ok = 0;
    let signalled = false;
    const errors: { code: Code; message: string }[] = [];
    const caller = async (): Promise<void> => {
      for (let i = 0; ; i++) {
        try {
          await board.getByRank({ rank: 1 + (i % 10_000) });
          ok++;
        } catch (error) {
          const e = ConnectError.from(error);
          errors.push({ code: e.code, message: e.rawMessage });
          if (!signalled) throw error;
          return;
        }
      }
    };
    const callers = Array.from({ length: 8 }, () => caller());
    // Under load: the signal comes once the callers have had 500 calls answered
    // (a count, not a time: a busy machine takes longer to get there).
    while (ok < UNDER_LOAD && errors.length === 0) await sleep(50);
    const servedBefore = sample(
      await scoreboard.metrics(),
      'scoreboard_requests_total{method="GetByRank",code="OK"}',
    );

    const signalledAt = Date.now();
    signalled = true;
    scoreboard.child.kill("SIGTERM");
    await sleep(1000);
    expect(scoreboard.child.exitCode).toBeNull();
    expect(await connectionRefused(scoreboard.port)).toBe(true);
    slow.end(frame.subarray(3));
    const slowTrailers = await trailers;
    await Promise.all(callers);
    session.close();
    const code = await scoreboard.exited;
    const exitSeconds = (Date.now() - signalledAt) / 1000;

    expect(code).toBe(0);
    expect(exitSeconds).toBeLessThan(GRACE_SECONDS);
    // The slow call was answered in full.
    expect(slowTrailers["grpc-status"]).toBe("0");
    const reply = Buffer.concat(chunks);
    expect(fromBinary(EntrySchema, reply.subarray(5)).rank).toBe(7);
    expect(ok).toBeGreaterThanOrEqual(UNDER_LOAD);
    expect(servedBefore).toBeGreaterThanOrEqual(UNDER_LOAD);
    // Calls after the drain began were refused before reaching the service: a refused
    // connection, or a stream the server refused (HTTP/2 REFUSED_STREAM: not processed,
    // safe to retry; connect-node reports it as INTERNAL, grpc-js as UNAVAILABLE).
    // Never a call cut in the middle.
    const cut = errors.filter((e) => !/ECONNREFUSED|NGHTTP2_REFUSED_STREAM/.test(e.message));
    expect(cut).toEqual([]);
    process.stdout.write(
      `${JSON.stringify({
        test: "scoreboard SIGTERM under load",
        ok,
        refusedAfterSignal: errors.length,
        kinds: [...new Set(errors.map((e) => e.message))],
        exitSeconds,
      })}\n`,
    );
  });
});
