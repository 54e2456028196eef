/**
 * A database outage under load: chat-api on a PostgreSQL cluster of the test's
 * own, which is stopped while eight clients write and read, then started again.
 * While it is away, every answer is a fast 503 in the envelope, /readyz is red
 * and /healthz green; once it is back, everything works again without a
 * restart (writes, reads, and long-polls woken by new events), and every write
 * that was answered with success is in the database.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { type PrivatePostgres, until } from "@repo/bench-kit";
import { Client } from "pg";
import {
  type Answer,
  type ChatProcess,
  apiKey,
  chatDatabase,
  client,
  startChatApi,
} from "./support";

jest.setTimeout(180_000);

let pg: PrivatePostgres;
let chat: ChatProcess;
let url: string;

beforeAll(async () => {
  ({ pg, url } = await chatDatabase());
  chat = await startChatApi({
    DATABASE_URL: url,
    CHAT_SHUTDOWN_GRACE_SECONDS: "5",
    // Eight workers write a draft each turn for about ten seconds: past the default
    // cap of 1,000 drafts per user on a fast machine. The cap has its own test
    // (test/limits.test.ts); this one is about the outage.
    CHAT_MAX_OBJECTS_PER_USER: "1000000",
  });
});

afterAll(async () => {
  chat.child.kill("SIGKILL");
  await pg.destroy();
});

describe("a database outage under load", () => {
  it("answers 503 fast while the database is away, recovers by itself, and loses no acknowledged write", async () => {
    const hamlet = await apiKey(chat.base, "hamlet@example.com");
    const { call, agent } = client(chat.base);
    const ledger = new Map<number, string>();
    // Every answer of the load, with when it came.
    const answers: (Answer & { at: number })[] = [];
    const failures: string[] = [];
    let outage = false;
    let running = true;

    // A client's event queue and long-poll, to see the events connection come back.
    const registered = await call("POST", "/api/v1/register", {
      auth: hamlet,
      form: { event_types: JSON.stringify(["drafts"]) },
    });
    expect(registered.status).toBe(200);
    const queueId = String(registered.body.queue_id);
    const lastEventId = Number(registered.body.last_event_id);

    const worker = async (n: number): Promise<void> => {
      for (let seq = 0; running; seq++) {
        const content = `worker ${n} draft ${seq}`;
        try {
          const write = await call("POST", "/api/v1/drafts", {
            auth: hamlet,
            form: { drafts: JSON.stringify([{ type: "", to: [], topic: "", content }]) },
          });
          answers.push({ ...write, at: Date.now() });
          const ids = write.body.ids;
          if (write.status === 200 && Array.isArray(ids) && typeof ids[0] === "number")
            ledger.set(ids[0], content);
          const read = await call("GET", "/api/v1/users/me", { auth: hamlet });
          answers.push({ ...read, at: Date.now() });
        } catch (error) {
          failures.push(String(error));
        }
        if (outage) await sleep(20);
      }
    };
    const workers = Array.from({ length: 8 }, (_, n) => worker(n));

    await sleep(3000);
    outage = true;
    const stoppingAt = Date.now();
    await pg.stop();
    const stoppedAt = Date.now();
    await until(
      async () => (await call("GET", "/readyz")).status === 503,
      5000,
      "/readyz to go red",
    );
    const healthDuringOutage = await call("GET", "/healthz");
    await sleep(4000);
    const outageSeconds = (Date.now() - stoppedAt) / 1000;

    await pg.start();
    outage = false;
    const restartedAt = Date.now();
    await until(async () => (await call("GET", "/readyz")).status === 200, 30_000, "/readyz");
    await until(
      async () =>
        (
          await call("POST", "/api/v1/drafts", {
            auth: hamlet,
            form: { drafts: JSON.stringify([{ type: "", to: [], topic: "", content: "probe" }]) },
          })
        ).status === 200,
      30_000,
      "a write to succeed again",
    );
    const recoveredAt = Date.now();
    const recoverySeconds = (recoveredAt - restartedAt) / 1000;
    await sleep(3000);
    running = false;
    await Promise.all(workers);

    // The events connection came back: a new event wakes a long-poll. First catch up
    // with the load's events, then wait for a new one.
    const queue = `queue_id=${encodeURIComponent(queueId)}`;
    const backlog = await call(
      "GET",
      `/api/v1/events?${queue}&last_event_id=${lastEventId}&dont_block=true`,
      { auth: hamlet },
    );
    const seenUpTo = Math.max(
      lastEventId,
      ...(backlog.body.events as { id: number }[]).map((e) => e.id),
    );
    const poll = call("GET", `/api/v1/events?${queue}&last_event_id=${seenUpTo}`, {
      auth: hamlet,
    });
    await sleep(500);
    const created = await call("POST", "/api/v1/drafts", {
      auth: hamlet,
      form: {
        drafts: JSON.stringify([{ type: "", to: [], topic: "", content: "after the outage" }]),
      },
    });
    expect(created.status).toBe(200);
    const polled = await poll;
    expect(polled.status).toBe(200);
    const events = polled.body.events as {
      type: string;
      op: string;
      drafts?: { content: string }[];
    }[];
    expect(events.some((e) => e.drafts?.some((d) => d.content === "after the outage"))).toBe(true);
    await agent.close();

    // Nothing hung, crashed or was refused without an answer.
    expect(failures).toEqual([]);
    expect(chat.child.exitCode).toBeNull();
    // Before the stop and after the recovery: every answer a success.
    const statuses = (list: Answer[]) => [...new Set(list.map((a) => a.status))].sort();
    const before = answers.filter((a) => a.at < stoppingAt);
    const away = answers.filter((a) => a.at >= stoppingAt && a.at < recoveredAt);
    const after = answers.filter((a) => a.at >= recoveredAt);
    expect(statuses(before)).toEqual([200]);
    expect(statuses(after)).toEqual([200]);
    // Meanwhile: successes (answered from the caches, or before the stop took effect) or
    // the 503 envelope, within a second; never a 500.
    const refused = away.filter((a) => a.status !== 200);
    expect(refused.length).toBeGreaterThan(50);
    for (const answer of refused) {
      expect(answer.status).toBe(503);
      expect(answer.body).toEqual({
        result: "error",
        msg: "Service unavailable: the database cannot be reached; try again shortly",
        code: "SERVICE_UNAVAILABLE",
      });
    }
    const slowest = Math.max(...refused.map((a) => a.ms));
    expect(slowest).toBeLessThan(1000);
    expect(healthDuringOutage.status).toBe(200);

    // Every acknowledged write is in the database, as acknowledged.
    const db = new Client({ connectionString: url });
    await db.connect();
    const { rows } = await db.query<{ id: number; content: string }>(
      "SELECT id, content FROM drafts WHERE id = ANY($1::int[])",
      [[...ledger.keys()]],
    );
    await db.end();
    const stored = new Map(rows.map((r) => [r.id, r.content]));
    const lost = [...ledger].filter(([id, content]) => stored.get(id) !== content);
    expect(lost).toEqual([]);
    expect(ledger.size).toBeGreaterThan(100);

    // Log lines are written in batches, at least every 100 ms: the last ones may still come.
    const logged = () => chat.logs.filter((l) => l.msg === "database unavailable").length;
    await until(() => logged() >= refused.length, 5_000, "the outage's log lines");
    expect(logged()).toBe(refused.length);
    process.stdout.write(
      `${JSON.stringify({
        test: "chat-api database outage",
        acknowledgedWrites: ledger.size,
        answersBefore: before.length,
        answersWhileAway: away.length,
        refusedWith503: refused.length,
        slowest503Ms: Math.round(slowest),
        outageSeconds,
        recoverySeconds,
        answersAfter: after.length,
      })}\n`,
    );
  });
});
