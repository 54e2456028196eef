/**
 * A soak: chat-api on PostgreSQL (a cluster of the test's own) under a steady
 * mixed load for three minutes (loopback only; the load stops by itself), after
 * 20 s of warm-up at the same rates. Zero errors, and memory flat: the heap
 * after the run within 10 % of the heap after warm-up, each read right after a
 * full collection (through the inspector), so it is what the process keeps.
 */
import { type PrivatePostgres, autocannon, freePort, heapAfterGc } from "@repo/bench-kit";
import { type ChatProcess, apiKey, chatDatabase, client, startChatApi } from "./support";

const SOAK_SECONDS = Number(process.env.STRESS_SOAK_SECONDS ?? 180);
const WARM_UP_SECONDS = 20;

jest.setTimeout((SOAK_SECONDS + WARM_UP_SECONDS + 120) * 1000);

let pg: PrivatePostgres;
let chat: ChatProcess;
let inspectPort: number;

beforeAll(async () => {
  let url: string;
  ({ pg, url } = await chatDatabase());
  inspectPort = await freePort();
  chat = await startChatApi({ DATABASE_URL: url, CHAT_LOG_LEVEL: "warn" }, [
    `--inspect=127.0.0.1:${inspectPort}`,
  ]);
});

afterAll(async () => {
  chat.child.kill("SIGKILL");
  await pg.destroy();
});

describe("a three-minute soak", () => {
  it("answers every request at a steady rate, with a flat heap", async () => {
    const hamlet = await apiKey(chat.base, "hamlet@example.com");
    const { call, agent } = client(chat.base);
    const created = await call("POST", "/api/v1/drafts", {
      auth: hamlet,
      form: { drafts: JSON.stringify([{ type: "", to: [], topic: "", content: "soak" }]) },
    });
    const draftId = (created.body.ids as number[])[0];
    await agent.close();
    const auth = `Basic ${Buffer.from(hamlet.join(":")).toString("base64")}`;
    const form = "application/x-www-form-urlencoded";
    const mix = [
      { path: "/api/v1/users/me", rate: 100 },
      { path: "/api/v1/realm/presence", rate: 20 },
      { path: "/api/v1/server_settings", rate: 50 },
      {
        path: `/api/v1/drafts/${draftId}`,
        rate: 50,
        method: "PATCH" as const,
        body: `draft=${encodeURIComponent(JSON.stringify({ type: "", to: [], topic: "", content: "edited" }))}`,
      },
    ];
    const load = (seconds: number) =>
      Promise.all(
        mix.map((m) =>
          autocannon({
            url: `${chat.base}${m.path}`,
            method: m.method ?? "GET",
            headers: {
              authorization: auth,
              ...(m.body === undefined ? {} : { "content-type": form }),
            },
            ...(m.body === undefined ? {} : { body: m.body }),
            connections: 4,
            seconds,
            rate: m.rate,
          }),
        ),
      );

    const warm = await load(WARM_UP_SECONDS);
    const afterWarmUp = await heapAfterGc(inspectPort);
    const soak = await load(SOAK_SECONDS);
    const afterRun = await heapAfterGc(inspectPort);
    const requests = soak.reduce((sum, r) => sum + r.requests, 0);
    const planned = mix.reduce((sum, m) => sum + m.rate, 0) * SOAK_SECONDS;
    process.stdout.write(
      `${JSON.stringify({
        test: "chat-api soak",
        seconds: SOAK_SECONDS,
        requests,
        planned,
        failures: soak.reduce((sum, r) => sum + r.failures, 0),
        p99Ms: Math.max(...soak.map((r) => r.p99Ms)),
        heapAfterWarmUpMiB: +(afterWarmUp / 2 ** 20).toFixed(1),
        heapAfterRunMiB: +(afterRun / 2 ** 20).toFixed(1),
        heapChange: +(afterRun / afterWarmUp - 1).toFixed(3),
      })}\n`,
    );
    expect(warm.concat(soak).map((r) => r.failures)).toEqual(mix.concat(mix).map(() => 0));
    // Steady: the load got (almost) every request it asked for.
    expect(requests).toBeGreaterThan(planned * 0.95);
    expect(afterRun).toBeLessThanOrEqual(afterWarmUp * 1.1);
    expect(chat.child.exitCode).toBeNull();
  });
});
