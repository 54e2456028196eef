import { setTimeout as sleep } from "node:timers/promises";
import { connect } from "node:net";
import { type TestServer, apiError, startTestServer } from "./support/server";

/**
 * Each limit at its edge: just under passes, just over gets the documented
 * answer. The limits are set small here; docs/chat-api.md lists the defaults.
 */
let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({
    env: {
      CHAT_MAX_BODY_BYTES: "4096",
      CHAT_MAX_HEADER_BYTES: "4096",
      CHAT_MAX_JSON_DEPTH: "4",
      CHAT_HEADERS_TIMEOUT_SECONDS: "1",
      CHAT_REQUEST_TIMEOUT_SECONDS: "2",
      CHAT_KEEP_ALIVE_SECONDS: "3",
      CHAT_MAX_POLLS_PER_USER: "2",
      CHAT_MAX_QUEUES_PER_USER: "3",
      CHAT_MAX_INVITES_PER_DAY: "3",
      CHAT_MAX_OBJECTS_PER_USER: "2",
      CHAT_EVENT_HEARTBEAT_SECONDS: "20",
    },
  });
});

afterAll(() => server.close());

/** Sends `chunks` over a raw socket, `gapMs` apart; resolves with what the server answered. */
function raw(chunks: string[], gapMs: number): Promise<{ text: string; ms: number }> {
  return new Promise((resolve) => {
    const started = Date.now();
    const socket = connect(server.port, "127.0.0.1");
    let text = "";
    socket.on("data", (data: Buffer) => (text += data.toString()));
    socket.on("close", () => resolve({ text, ms: Date.now() - started }));
    socket.on("error", () => undefined);
    chunks.forEach((chunk, i) => {
      setTimeout(() => {
        if (!socket.destroyed) socket.write(chunk);
      }, i * gapMs);
    });
  });
}

describe("request body size (CHAT_MAX_BODY_BYTES)", () => {
  const post = (bytes: number) =>
    server.call("POST", "/api/v1/dev_fetch_api_key", {
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: `username=${"x".repeat(bytes - "username=".length)}`,
    });

  it("reads a body of the limit, and answers 413 in the envelope one byte over", async () => {
    const under = await post(4096);
    expect(under.status).toBe(401);
    const over = await post(4097);
    expect(over.status).toBe(413);
    expect(over.body).toMatchObject({ result: "error", code: "BAD_REQUEST" });
  });
});

describe("request head size (CHAT_MAX_HEADER_BYTES)", () => {
  it("serves a URL that fits, and answers 431 in the envelope when the head is too large", async () => {
    const fits = await server.call("GET", "/api/v1/server_settings", {
      query: { pad: "x".repeat(3000) },
    });
    expect(fits.status).toBe(200);
    const over = await server.call("GET", "/api/v1/server_settings", {
      query: { pad: "x".repeat(5000) },
    });
    expect([over.status, over.body]).toEqual([431, apiError("Request header fields too large")]);
  });
});

describe("JSON nesting (CHAT_MAX_JSON_DEPTH)", () => {
  it("parses a value nested to the limit, and refuses one level more before parsing", async () => {
    const iago = await server.person("iago");
    const call = (add: string) =>
      server.call("POST", "/api/v1/user_groups/1/subgroups", {
        auth: [iago.email, iago.apiKey],
        form: { add },
      });
    const atLimit = await call("[[[[1]]]]");
    expect(atLimit.body.msg).toBe("add[0] is not an integer");
    const over = await call("[[[[[1]]]]]");
    expect(over.body).toEqual(apiError("add is nested too deeply (limit: 4 levels)"));
    // Brackets inside strings do not count.
    expect((await call('["[[[[[[[["]')).body.msg).toBe("add[0] is not an integer");
  });
});

describe("slow clients", () => {
  it("answers a head completed in time, and 408 to one that trickles past CHAT_HEADERS_TIMEOUT_SECONDS", async () => {
    const inTime = await raw(
      ["GET /healthz HTTP/1.1\r\n", "Host: chat.test\r\nConnection: close\r\n\r\n"],
      300,
    );
    expect(inTime.text.split("\r\n")[0]).toBe("HTTP/1.1 200 OK");
    const slow = await raw(
      [
        "GET /healthz HTTP/1.1\r\n",
        "Host: chat.test\r\n",
        "X-A: 1\r\n",
        "X-B: 1\r\n",
        "X-C: 1\r\n",
      ],
      700,
    );
    expect(slow.text.split("\r\n")[0]).toBe("HTTP/1.1 408 Request Timeout");
    expect(slow.text).toContain('{"result":"error","msg":"Request timeout","code":"BAD_REQUEST"}');
    expect(slow.ms).toBeLessThan(5000);
  });

  it("keeps an idle connection CHAT_KEEP_ALIVE_SECONDS, past the head's timeout, then closes it", async () => {
    const get = "GET /healthz HTTP/1.1\r\nHost: chat.test\r\n\r\n";
    // The second request comes 1.5 s after the first, on the same connection (a head's
    // timeout is 1 s: idle time is not a slow head); the server closes 3 s after it.
    const { text, ms } = await raw([get, get], 1500);
    const answers = text.split("HTTP/1.1 ").slice(1);
    expect(answers.map((answer) => answer.split("\r\n")[0])).toEqual(["200 OK", "200 OK"]);
    expect(answers[1]).toContain("Keep-Alive: timeout=3\r\n");
    expect(ms).toBeGreaterThanOrEqual(4400);
    expect(ms).toBeLessThan(7000);
  });

  it("answers 408 to a body that does not arrive within CHAT_REQUEST_TIMEOUT_SECONDS", async () => {
    const head =
      "POST /api/v1/dev_fetch_api_key HTTP/1.1\r\nHost: chat.test\r\n" +
      "Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 100\r\n\r\n";
    const slow = await raw([head, "username=", "a", "b", "c", "d"], 700);
    expect(slow.text.split("\r\n")[0]).toBe("HTTP/1.1 408 Request Timeout");
    expect(slow.ms).toBeLessThan(6000);
  });
});

describe("long-polls per user (CHAT_MAX_POLLS_PER_USER)", () => {
  it("holds the limit's number of polls, and answers 429 to one more", async () => {
    const hamlet = await server.person("hamlet");
    const auth = [hamlet.email, hamlet.apiKey] as const;
    const queue = (await server.call("POST", "/api/v1/register", { auth })).body.queue_id as string;
    const controller = new AbortController();
    const waiting = [1, 2].map(() =>
      fetch(`${server.url}/api/v1/events?queue_id=${queue}`, {
        headers: {
          host: "chat.test",
          authorization: `Basic ${Buffer.from(`${hamlet.email}:${hamlet.apiKey}`).toString("base64")}`,
        },
        signal: controller.signal,
      }).catch(() => undefined),
    );
    await sleep(300);
    const third = await server.call("GET", "/api/v1/events", { auth, query: { queue_id: queue } });
    expect(third.status).toBe(429);
    expect(third.body).toEqual({
      result: "error",
      msg: "Too many event polls open at once for this user (limit: 2).",
      code: "RATE_LIMIT_HIT",
      "retry-after": 1,
    });
    const other = await server.person("othello");
    const otherQueue = (
      await server.call("POST", "/api/v1/register", { auth: [other.email, other.apiKey] })
    ).body.queue_id as string;
    const someoneElse = await server.call("GET", "/api/v1/events", {
      auth: [other.email, other.apiKey],
      query: { queue_id: otherQueue, dont_block: true },
    });
    expect(someoneElse.status).toBe(200);
    controller.abort();
    await Promise.all(waiting);
    await sleep(300);
    const afterwards = await server.call("GET", "/api/v1/events", {
      auth,
      query: { queue_id: queue, dont_block: true },
    });
    expect(afterwards.status).toBe(200);
  });
});

describe("event queues per user (CHAT_MAX_QUEUES_PER_USER)", () => {
  it("keeps the limit's number of queues, collecting the least recently polled to make room", async () => {
    const cordelia = await server.person("cordelia");
    const auth = [cordelia.email, cordelia.apiKey] as const;
    const register = async () =>
      (await server.call("POST", "/api/v1/register", { auth })).body.queue_id as string;
    const poll = (queue: string) =>
      server.call("GET", "/api/v1/events", { auth, query: { queue_id: queue, dont_block: true } });
    const [first, second, third] = [await register(), await register(), await register()];
    // The first is polled, so the second is now the least recently polled.
    expect((await poll(first)).status).toBe(200);
    const fourth = await register();
    const fifth = await register();
    expect((await poll(second)).body).toEqual({
      ...apiError(`Bad event queue ID: ${second}`, "BAD_EVENT_QUEUE_ID"),
      queue_id: second,
    });
    expect((await poll(third)).body.code).toBe("BAD_EVENT_QUEUE_ID");
    for (const kept of [first, fourth, fifth]) expect((await poll(kept)).status).toBe(200);
    const held = await server.db.prisma.eventQueue.count({ where: { user_id: cordelia.id } });
    expect(held).toBe(3);
  });
});

describe("invitations per realm and day (CHAT_MAX_INVITES_PER_DAY)", () => {
  it("sends up to the limit in 24 hours, and refuses a batch that would pass it, storing nothing", async () => {
    const iago = await server.person("iago");
    const invite = (emails: string) =>
      server.call("POST", "/api/v1/invites", {
        auth: [iago.email, iago.apiKey],
        form: { invitee_emails: emails, stream_ids: [] },
      });
    const stored = () => server.db.prisma.invitation.count();
    const limitReached = {
      result: "error",
      code: "INVITATION_FAILED",
      msg: "To protect users, Zulip limits the number of invitations you can send in one day. Because you have reached the limit, no invitations were sent.",
      errors: [],
      sent_invitations: false,
      license_limit_reached: false,
      daily_limit_reached: true,
    };
    const before = await stored();
    // More addresses than a day allows: refused before any is looked at (this server's
    // body limit is 4 KiB; at the default 1 MiB a request can name about 60,000).
    const many = Array.from({ length: 200 }, (_, i) => `g${String(i)}@x.co`);
    expect((await invite(many.join(","))).body).toEqual(limitReached);
    expect((await invite("a1@example.com, a2@example.com")).status).toBe(200);
    expect((await invite("a3@example.com, a4@example.com")).body).toEqual(limitReached);
    expect(await stored()).toBe(before + 2);
    expect((await invite("a3@example.com")).status).toBe(200);
    expect((await invite("a5@example.com")).body).toEqual(limitReached);
    expect(await stored()).toBe(before + 3);
  });
});

describe("objects per user (CHAT_MAX_OBJECTS_PER_USER)", () => {
  it("keeps drafts, saved snippets, pending reminders and devices each to the limit", async () => {
    const othello = await server.person("othello");
    const auth = [othello.email, othello.apiKey] as const;
    const post = (path: string, form: Record<string, unknown> = {}) =>
      server.call("POST", `/api/v1${path}`, { auth, form });
    const draft = { type: "", to: [], topic: "", content: "words" };
    const messages = await server.call("GET", "/api/v1/messages", {
      auth,
      query: { anchor: "newest", num_before: 1, num_after: 0 },
    });
    const messageId = (messages.body.messages as { id: number }[])[0]?.id;
    const later = Math.floor(Date.now() / 1000) + 3600;
    // Three people Othello may mute, one per attempt.
    const mutable = await Promise.all(
      ["hamlet", "iago", "cordelia"].map(async (who) => (await server.person(who)).id),
    );
    const kinds: [string, () => ReturnType<typeof post>, () => Promise<number>][] = [
      [
        "drafts",
        () => post("/drafts", { drafts: [draft] }),
        () => server.db.prisma.draft.count({ where: { user_id: othello.id } }),
      ],
      [
        "saved snippets",
        () => post("/saved_snippets", { title: "t", content: "c" }),
        () => server.db.prisma.savedSnippet.count({ where: { user_id: othello.id } }),
      ],
      [
        "reminders",
        () => post("/reminders", { message_id: messageId, scheduled_delivery_timestamp: later }),
        () => server.db.prisma.reminder.count({ where: { user_id: othello.id } }),
      ],
      [
        "devices",
        () => post("/register_client_device"),
        () => server.db.prisma.device.count({ where: { user_id: othello.id } }),
      ],
      [
        "scheduled messages",
        () =>
          post("/scheduled_messages", {
            type: "direct",
            to: JSON.stringify([othello.id]),
            content: "later",
            scheduled_delivery_timestamp: later,
          }),
        () => server.db.prisma.scheduledMessage.count({ where: { sender_id: othello.id } }),
      ],
      [
        "muted users",
        () => post(`/users/me/muted_users/${String(mutable.shift())}`),
        () => server.db.prisma.mutedUser.count({ where: { user_id: othello.id } }),
      ],
    ];
    for (const [what, add, count] of kinds) {
      expect((await add()).status).toBe(200);
      expect((await add()).status).toBe(200);
      const over = await add();
      expect([over.status, over.body]).toEqual([
        400,
        apiError(`You have too many ${what} (limit: 2).`),
      ]);
      expect(await count()).toBe(2);
    }
    // A batch of drafts that would pass the limit is refused whole.
    await server.db.prisma.draft.deleteMany({ where: { user_id: othello.id } });
    const batch = await post("/drafts", { drafts: [draft, draft, draft] });
    expect(batch.body).toEqual(apiError("You have too many drafts (limit: 2)."));
    expect(await server.db.prisma.draft.count({ where: { user_id: othello.id } })).toBe(0);
  });
});

describe("security", () => {
  it("sends the security headers on every answer", async () => {
    for (const path of ["/api/v1/server_settings", "/api/v1/nothing", "/healthz"]) {
      const reply = await server.call("GET", path);
      expect(reply.headers["x-content-type-options"]).toBe("nosniff");
      expect(reply.headers["x-frame-options"]).toBe("DENY");
      expect(reply.headers["content-security-policy"]).toBe(
        "default-src 'none';frame-ancestors 'none'",
      );
      expect(String(reply.headers["strict-transport-security"])).toContain("max-age=");
      expect(reply.headers["referrer-policy"]).toBe("no-referrer");
      expect(reply.headers["cross-origin-resource-policy"]).toBe("same-origin");
      // Headers for HTML documents only: none on an API's answers.
      for (const name of [
        "x-powered-by",
        "cross-origin-opener-policy",
        "origin-agent-cluster",
        "x-dns-prefetch-control",
        "x-download-options",
        "x-permitted-cross-domain-policies",
        "x-xss-protection",
      ])
        expect(reply.headers[name]).toBeUndefined();
    }
  });

  it("never writes an API key to the log", async () => {
    const hamlet = await server.person("hamlet");
    const fetched = await server.call("POST", "/api/v1/dev_fetch_api_key", {
      form: { username: hamlet.email },
    });
    const bot = await server.db.prisma.user.findFirstOrThrow({
      where: { email: "hamlet-bot@example.com" },
    });
    const regenerated = await server.call("POST", `/api/v1/bots/${bot.id}/api_key/regenerate`, {
      auth: [hamlet.email, hamlet.apiKey],
      query: { api_key: hamlet.apiKey },
    });
    await server.call("GET", "/api/v1/users/me", { auth: [hamlet.email, "W".repeat(32)] });
    await server.call("GET", `/api/v1/users/me?api_key=${hamlet.apiKey}`, {
      auth: [hamlet.email, hamlet.apiKey],
    });
    const keys = [hamlet.apiKey, fetched.body.api_key, regenerated.body.api_key, "W".repeat(32)];
    expect(keys.every((k) => typeof k === "string" && k.length === 32)).toBe(true);
    const log = server.logs.join("");
    expect(log).toContain("request completed");
    for (const key of keys) expect(log).not.toContain(key as string);
  });

  it("answers a failure inside with the plain 500: no stack, SQL or library text", async () => {
    const hamlet = await server.person("hamlet");
    await server.db.sql.exec(`
      CREATE FUNCTION refuse_snippet() RETURNS trigger LANGUAGE plpgsql AS
        $$ BEGIN RAISE EXCEPTION 'refused by a test trigger'; END $$;
      CREATE TRIGGER refuse_snippet BEFORE INSERT ON saved_snippets
        FOR EACH ROW EXECUTE FUNCTION refuse_snippet();`);
    try {
      const reply = await server.call("POST", "/api/v1/saved_snippets", {
        auth: [hamlet.email, hamlet.apiKey],
        form: { title: "t", content: "c" },
      });
      expect([reply.status, reply.body]).toEqual([
        500,
        { result: "error", msg: "Internal server error" },
      ]);
      expect(reply.text).not.toMatch(/trigger|prisma|SQL|INSERT|\bat \w/i);
      expect(server.logs.join("")).toContain("refused by a test trigger");
    } finally {
      await server.db.sql.exec(
        "DROP TRIGGER refuse_snippet ON saved_snippets; DROP FUNCTION refuse_snippet();",
      );
    }
  });
});
