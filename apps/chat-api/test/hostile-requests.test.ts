/**
 * The heavy requests of issue 23, each while another user keeps calling: the
 * attack gets its documented answer, the other user's calls keep being
 * answered (none waits past a bound far above their usual few milliseconds,
 * where before the fixes they waited 15 s to 2 minutes), and the attacker
 * stored no more than the caps allow.
 */
import { setTimeout as sleep } from "node:timers/promises";
import http from "node:http";
import { deflateSync, gzipSync } from "node:zlib";
import { type Cast, type TestServer, loadCast, startTestServer } from "./support/server";

let server: TestServer;
let cast: Cast;

beforeAll(async () => {
  server = await startTestServer();
  cast = await loadCast(server, ["hamlet", "othello", "cordelia"]);
});

afterAll(() => server.close());

/** A request from another user is never held longer than this while an attack runs. */
const RESPONSIVE_MS = 3000;

/** Runs `attack` while Cordelia calls GET /users/me in a loop; returns its result and her slowest call. */
async function whileOthersCall<T>(
  attack: () => Promise<T>,
): Promise<{ result: T; slowest: number }> {
  const state = { running: true };
  let slowest = 0;
  let calls = 0;
  const other = (async () => {
    while (state.running) {
      const started = Date.now();
      const reply = await server.call("GET", "/api/v1/users/me", cast.as("cordelia"));
      expect(reply.status).toBe(200);
      slowest = Math.max(slowest, Date.now() - started);
      calls += 1;
      await sleep(20);
    }
  })();
  try {
    const result = await attack();
    return { result, slowest };
  } finally {
    state.running = false;
    await other;
    expect(calls).toBeGreaterThan(0);
  }
}

const BOUNDARY = "----hostile";

/** A raw multipart POST without authentication; resolves with the status. */
function multipartPost(chunks: Iterable<Buffer>): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${server.url}/api/v1/messages`, {
      method: "POST",
      headers: { "content-type": `multipart/form-data; boundary=${BOUNDARY}` },
    });
    req.on("response", (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode ?? 0));
    });
    req.on("error", (error: NodeJS.ErrnoException) => {
      if (error.code !== "EPIPE" && error.code !== "ECONNRESET") reject(error);
    });
    const it = chunks[Symbol.iterator]();
    const pump = (): void => {
      const next = it.next();
      if (next.done === true || req.destroyed) {
        req.end();
        return;
      }
      if (req.write(next.value)) setImmediate(pump);
      else req.once("drain", pump);
    };
    pump();
  });
}

const part = (name: string, value: string) =>
  Buffer.from(
    `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`,
  );

describe("heavy requests while another user calls", () => {
  it("multipart fields named a[4294967294] and a[x], unauthenticated", async () => {
    const { result, slowest } = await whileOthersCall(() =>
      multipartPost([
        part("a[4294967294]", "x"),
        part("a[x]", "y"),
        Buffer.from(`--${BOUNDARY}--\r\n`),
      ]),
    );
    expect(result).toBe(401);
    expect(slowest).toBeLessThan(RESPONSIVE_MS);
  });

  it("five multipart bodies of 1,000 fields of 1 MiB at once, unauthenticated", async () => {
    const field = part("f", "z".repeat(1024 * 1024));
    const body = function* (): Generator<Buffer> {
      for (let i = 0; i < 1000; i++) yield field;
    };
    const before = process.memoryUsage().rss;
    const { result, slowest } = await whileOthersCall(() =>
      Promise.all([...Array(5).keys()].map(() => multipartPost(body()))),
    );
    expect(result).toEqual([413, 413, 413, 413, 413]);
    expect(slowest).toBeLessThan(RESPONSIVE_MS);
    // The server runs in this process: the bodies were not kept (5 GB if they were).
    expect(process.memoryUsage().rss - before).toBeLessThan(512 * 1024 * 1024);
  });

  it("a direct message to 100,000 copies of one recipient", async () => {
    const to = JSON.stringify(Array.from({ length: 100_000 }, () => cast.id("hamlet")));
    const messages = await server.db.prisma.message.count();
    const { result, slowest } = await whileOthersCall(() =>
      server.call("POST", "/api/v1/messages", {
        ...cast.as("othello"),
        form: { type: "direct", to, content: "one recipient" },
      }),
    );
    expect(result.status).toBe(200);
    expect(slowest).toBeLessThan(RESPONSIVE_MS);
    expect(await server.db.prisma.message.count()).toBe(messages + 1);
    const rows = await server.db.prisma.userMessage.count({
      where: { message_id: result.body.id as number },
    });
    expect(rows).toBe(2);
  });

  it("an invitation to 20,000 addresses", async () => {
    const emails = Array.from({ length: 20_000 }, (_, i) => `guest${String(i)}@example.com`);
    const { result, slowest } = await whileOthersCall(() =>
      server.call("POST", "/api/v1/invites", {
        ...cast.as("othello"),
        form: { invitee_emails: emails.join(","), stream_ids: [] },
      }),
    );
    expect(result.body).toMatchObject({ code: "INVITATION_FAILED", daily_limit_reached: true });
    expect(slowest).toBeLessThan(RESPONSIVE_MS);
    expect(await server.db.prisma.invitation.count()).toBe(0);
  });

  it("300 event queues registered by one user", async () => {
    const { slowest } = await whileOthersCall(async () => {
      for (let i = 0; i < 300; i += 10)
        await Promise.all(
          [...Array(10).keys()].map(() =>
            server.call("POST", "/api/v1/register", {
              ...cast.as("othello"),
              form: { event_types: ["message"] },
            }),
          ),
        );
    });
    expect(slowest).toBeLessThan(RESPONSIVE_MS);
    const held = await server.db.prisma.eventQueue.count({
      where: { user_id: cast.id("othello") },
    });
    expect(held).toBeLessThanOrEqual(50);
  });
});

/**
 * Attacks the report found already answered well (issue 23, "what held"); these
 * keep them answered. Cross-realm access, private channels, other users'
 * objects and role checks are the isolation and caller-matrix tests; slow
 * clients and oversized heads are in limits.test.ts.
 */
describe("what held, and keeps holding", () => {
  const draftCount = () => server.db.prisma.draft.count();

  it.each([
    ["deflate", deflateSync],
    ["gzip", gzipSync],
  ])(
    "a %s bomb (16 MiB of one letter in a few KiB) is 413, and nothing is stored",
    async (encoding, squeeze) => {
      const plain = `drafts=${"a".repeat(16 * 1024 * 1024)}`;
      const bomb = squeeze(Buffer.from(plain));
      expect(bomb.length).toBeLessThan(64 * 1024);
      const before = await draftCount();
      const reply = await server.call("POST", "/api/v1/drafts", {
        ...cast.as("hamlet"),
        body: bomb,
        headers: {
          "content-type": "application/x-www-form-urlencoded",
          "content-encoding": encoding,
        },
      });
      expect(reply.status).toBe(413);
      expect(reply.body.result).toBe("error");
      expect(await draftCount()).toBe(before);
    },
  );

  it("__proto__ in a JSON parameter is refused by name, and pollutes nothing", async () => {
    const drafts = `[{"__proto__":{"polluted":"yes"},"type":"","to":[],"topic":"","content":"proto"}]`;
    const before = await draftCount();
    const reply = await server.call("POST", "/api/v1/drafts", {
      ...cast.as("hamlet"),
      form: { drafts },
    });
    expect(reply.body).toEqual({
      result: "error",
      msg: 'Argument "__proto__" at drafts[0] is unexpected',
      code: "BAD_REQUEST",
    });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(await draftCount()).toBe(before);
  });

  it("fields named __proto__ and constructor are ignored like any unknown field", async () => {
    const drafts = JSON.stringify([{ type: "", to: [], topic: "", content: "proto field" }]);
    const reply = await server.call("POST", "/api/v1/drafts", {
      ...cast.as("hamlet"),
      body: `__proto__=x&drafts=${encodeURIComponent(drafts)}&constructor=y`,
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
    expect(reply.status).toBe(200);
    expect(({} as Record<string, unknown>).x).toBeUndefined();
    const listed = await server.call("GET", "/api/v1/drafts", cast.as("hamlet"));
    expect(listed.body.drafts).toEqual(
      expect.arrayContaining([expect.objectContaining({ content: "proto field" })]),
    );
  });

  it("SQL in a value is stored and looked up as text", async () => {
    const content = "x'); DROP TABLE drafts; --";
    const created = await server.call("POST", "/api/v1/drafts", {
      ...cast.as("hamlet"),
      form: { drafts: [{ type: "", to: [], topic: "", content }] },
    });
    expect(created.status).toBe(200);
    const listed = await server.call("GET", "/api/v1/drafts", cast.as("hamlet"));
    expect(listed.body.drafts).toEqual(
      expect.arrayContaining([expect.objectContaining({ content })]),
    );
    const send = await server.call("POST", "/api/v1/messages", {
      ...cast.as("hamlet"),
      form: { type: "stream", to: "' OR 1=1 --", topic: "t", content: "c" },
    });
    expect(send.status).toBe(400);
    expect(send.body).toMatchObject({
      result: "error",
      msg: "Channel '' OR 1=1 --' does not exist",
    });
  });
});
