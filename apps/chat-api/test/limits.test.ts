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
      CHAT_MAX_POLLS_PER_USER: "2",
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
    await new Promise((resolve) => setTimeout(resolve, 300));
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
    await new Promise((resolve) => setTimeout(resolve, 300));
    const afterwards = await server.call("GET", "/api/v1/events", {
      auth,
      query: { queue_id: queue, dont_block: true },
    });
    expect(afterwards.status).toBe(200);
  });
});

describe("security", () => {
  it("sends the security headers on every answer", async () => {
    for (const path of ["/api/v1/server_settings", "/api/v1/nothing", "/healthz"]) {
      const reply = await server.call("GET", path);
      expect(reply.headers["x-content-type-options"]).toBe("nosniff");
      expect(reply.headers["x-frame-options"]).toBe("SAMEORIGIN");
      expect(String(reply.headers["content-security-policy"])).toContain("default-src 'none'");
      expect(String(reply.headers["strict-transport-security"])).toContain("max-age=");
      expect(reply.headers["referrer-policy"]).toBe("no-referrer");
      expect(reply.headers["x-powered-by"]).toBeUndefined();
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
