/**
 * SIGTERM under load: a request still arriving finishes and is answered, new
 * connections are refused at once, long-polls are released, the process exits
 * within its grace period, and no request the server began is cut: every write
 * the server logged as completed reached its client.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { mkdtempSync, rmSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connectionRefused } from "@repo/bench-kit";
import { type ChatProcess, apiKey, client, startChatApi } from "./support";

jest.setTimeout(120_000);

const GRACE_SECONDS = 10;
/** Write-and-read pairs answered before the signal. */
const UNDER_LOAD = 50;
let chat: ChatProcess;
let dataDir: string;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "chat-shutdown-"));
  // The embedded default (PGlite), as `pnpm start` runs it.
  chat = await startChatApi({
    CHAT_DATA_DIR: dataDir,
    CHAT_SHUTDOWN_GRACE_SECONDS: String(GRACE_SECONDS),
    CHAT_EVENT_HEARTBEAT_SECONDS: "60",
    // The load writes drafts without end; the per-user cap is tested elsewhere.
    CHAT_MAX_OBJECTS_PER_USER: "1000000",
  });
});

afterAll(() => {
  chat.child.kill("SIGKILL");
  rmSync(dataDir, { recursive: true, force: true });
});

describe("SIGTERM under load", () => {
  it("finishes what it began, refuses new connections, releases long-polls and exits in time", async () => {
    const hamlet = await apiKey(chat.base, "hamlet@example.com");
    const { call, agent } = client(chat.base);

    // Three clients waiting on their event queues (registered one after
    // another: a person registers at most two at once).
    const polls: {
      done: Promise<{ at: number } & ({ answer: { status: number } } | { error: string })>;
    }[] = [];
    for (let i = 0; i < 3; i++) {
      const registered = await call("POST", "/api/v1/register", {
        auth: hamlet,
        form: { event_types: JSON.stringify(["drafts"]) },
      });
      expect(registered.status).toBe(200);
      const queue = encodeURIComponent(String(registered.body.queue_id));
      // Not awaited here: the polls wait until the signal.
      polls.push({
        done: call("GET", `/api/v1/events?queue_id=${queue}&last_event_id=-1`, { auth: hamlet })
          .then((answer) => ({ answer, at: Date.now() }))
          .catch((error: unknown) => ({ error: String(error), at: Date.now() })),
      });
    }

    // A write whose body is still arriving when the signal comes.
    const form = `drafts=${encodeURIComponent(
      JSON.stringify([{ type: "", to: [], topic: "", content: "sent slowly" }]),
    )}`;
    const slow = net.connect(chat.port, "127.0.0.1");
    await new Promise((resolve) => slow.once("connect", resolve));
    let slowReply = "";
    slow.on("data", (chunk: Buffer) => (slowReply += chunk.toString()));
    const slowClosed = new Promise((resolve) => slow.once("close", resolve));
    slow.write(
      `POST /api/v1/drafts HTTP/1.1\r\nHost: 127.0.0.1\r\n` +
        `Authorization: Basic ${Buffer.from(hamlet.join(":")).toString("base64")}\r\n` +
        `Content-Type: application/x-www-form-urlencoded\r\nContent-Length: ${Buffer.byteLength(form)}\r\n\r\n` +
        form.slice(0, 10),
    );

    // Eight clients writing and reading as fast as they can.
    let ok = 0;
    let acknowledgedWrites = 0;
    const statuses: number[] = [];
    const errors: string[] = [];
    let signalled = false;
    const worker = async (): Promise<void> => {
      while (!signalled || errors.length === 0) {
        try {
          const write = await call("POST", "/api/v1/drafts", {
            auth: hamlet,
            form: { drafts: JSON.stringify([{ type: "", to: [], topic: "", content: "load" }]) },
          });
          statuses.push(write.status);
          if (write.status === 200) acknowledgedWrites++;
          const read = await call("GET", "/api/v1/users/me", { auth: hamlet });
          statuses.push(read.status);
          if (write.status === 200 && read.status === 200) ok++;
        } catch (error) {
          errors.push((error as NodeJS.ErrnoException).code ?? String(error));
          if (!signalled) throw error;
          return;
        }
      }
    };
    const workers = Array.from({ length: 8 }, () => worker());
    // Under load: the signal comes once 50 write-and-read pairs were answered
    // (a count, not a time: a busy machine takes longer to get there).
    while (ok < UNDER_LOAD && errors.length === 0) await sleep(50);

    const signalledAt = Date.now();
    signalled = true;
    chat.child.kill("SIGTERM");
    await sleep(1000);
    // Draining: still running (the slow write is in flight), but refusing new connections.
    expect(chat.child.exitCode).toBeNull();
    expect(await connectionRefused(chat.port)).toBe(true);
    // The rest of the body; the client keeps its side open until the answer
    // (Node takes a half-closed request as abandoned).
    slow.write(form.slice(10));
    while (!/\r\n\r\n.*\}/s.test(slowReply)) await sleep(20);
    slow.end();
    await slowClosed;
    await Promise.all(workers);
    const code = await chat.exited;
    const exitSeconds = (Date.now() - signalledAt) / 1000;
    await agent.close();

    expect(code).toBe(0);
    expect(exitSeconds).toBeLessThan(GRACE_SECONDS);
    // The slow write was answered, and committed.
    expect(slowReply).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(slowReply).toMatch(/"ids":\[\d+\]/);
    // Long-polls were answered (empty, at once), not dropped.
    for (const poll of await Promise.all(polls.map((p) => p.done))) {
      expect("answer" in poll ? poll.answer.status : poll.error).toBe(200);
      expect(poll.at - signalledAt).toBeLessThan(2000);
    }
    // Every answer a success; the only failures are connections refused or closed
    // before a request was read, once the server stopped taking them.
    expect([...new Set(statuses)]).toEqual([200]);
    expect(ok).toBeGreaterThanOrEqual(UNDER_LOAD);
    expect(
      errors.filter((e) => !["ECONNREFUSED", "UND_ERR_SOCKET", "ECONNRESET"].includes(e)),
    ).toEqual([]);
    // No request the server began was cut: none aborted, and every write it completed reached
    // its client (the load's, the slow one, and the three registrations aside).
    const completed = chat.logs.filter((l) => l.msg === "request completed");
    expect(chat.logs.filter((l) => l.msg === "request aborted")).toEqual([]);
    const writesCompleted = completed.filter(
      (l) => (l.req as { method: string; path: string }).path === "/api/v1/drafts",
    ).length;
    expect(writesCompleted).toBe(acknowledgedWrites + 1);
    process.stdout.write(
      `${JSON.stringify({
        test: "chat-api SIGTERM under load",
        answeredBeforeAndDuring: statuses.length,
        clientErrorsAfterClose: errors,
        exitSeconds,
      })}\n`,
    );
  });
});
