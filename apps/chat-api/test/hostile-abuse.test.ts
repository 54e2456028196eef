import { setTimeout as sleep } from "node:timers/promises";
import { randomBytes } from "node:crypto";
import { readdir } from "node:fs/promises";
import { PassThrough } from "node:stream";
import { request } from "undici";
import { deliverDueReminders } from "../src/actions/reminders";
import { LOGIN_FAILURES } from "../src/lib/rate-limit";
import { DEMO_PASSWORD } from "../src/cli/demo-data";
import { MAX_NARROW_OPERAND_LENGTH, MAX_NARROW_TERMS } from "../src/lib/narrow";
import { MAX_TYPING_AUDIENCE } from "../src/actions/typing";
import { MAX_EDIT_HISTORY_BYTES } from "../src/actions/message-edit";
import { multipart } from "./support/multipart";
import { insertChannelCopies } from "../bench/channel-copies";
import {
  type Cast,
  type Reply,
  type TestServer,
  ROOT_HOST,
  apiError,
  authOf,
  channelIds,
  loadCast,
  startTestServer,
} from "./support/server";

/**
 * The hostile round of issue 50: what one member (or administrator) could do
 * to freeze, bloat or starve the server, each answered with a clear error or
 * made harmless, nothing stored, and another person's request answered
 * meanwhile.
 */
let server: TestServer;
let cast: Cast;
let channels: Record<string, number>;
let crowd: number[];

/** More people than a conversation that hears typing may have. */
const CROWD = MAX_TYPING_AUDIENCE + 20;

beforeAll(async () => {
  server = await startTestServer({
    env: {
      CHAT_MAX_BOTS_PER_USER: "2",
      CHAT_UPLOAD_QUOTA_MIB_PER_USER: "1",
      // The test delivers reminders itself: the server's own scheduler would take some.
      CHAT_REMINDER_POLL_SECONDS: "3600",
    },
  });
  cast = await loadCast(server, ["iago", "hamlet", "othello", "cordelia", "desdemona"]);
  channels = await channelIds(server);
  const realm = await server.db.prisma.realm.findFirstOrThrow({ where: { subdomain: "" } });
  await server.db.prisma.user.createMany({
    data: Array.from({ length: CROWD }, (_, i) => ({
      realm_id: realm.id,
      email: `abuse${String(i)}@example.com`,
      delivery_email: `abuse${String(i)}@example.com`,
      full_name: `Abuse ${String(i)}`,
      api_key: randomBytes(16).toString("hex"),
    })),
  });
  crowd = (
    await server.db.prisma.user.findMany({
      where: { email: { startsWith: "abuse" } },
      select: { id: true },
    })
  ).map((u) => u.id);
}, 60_000);

afterAll(() => server.close());

const as = (who: string) => cast.as(who);
const call = (who: string, method: string, path: string, form: Record<string, unknown> = {}) =>
  server.call(method, `/api/v1${path}`, { ...as(who), form });

/** Another person's request, made while an attack is in flight: it must be answered. */
async function meanwhile<T>(attack: Promise<T>): Promise<{ attack: T; other: Reply }> {
  const [result, other] = await Promise.all([attack, call("cordelia", "GET", "/users/me")]);
  return { attack: result, other };
}

const typingRows = () => server.db.prisma.eventLog.count({ where: { event_type: "typing" } });

describe("linkifiers that would make javascript: or data: links", () => {
  it("refuses a URL template that is not http(s) or relative, and stores none", async () => {
    for (const template of [
      "javascript:alert({id})",
      "data:text/html,{id}",
      "JavaScript:{id}",
      "{id}",
      "vbscript:{id}",
    ]) {
      const reply = await call("iago", "POST", "/realm/filters", {
        pattern: "X-(?P<id>[0-9]+)",
        url_template: template,
      });
      expect([reply.status, reply.body]).toEqual([
        400,
        apiError(
          "Invalid URL template: it must start with http://, https:// or / (a link on this server).",
        ),
      ]);
    }
    expect(await server.db.prisma.linkifier.count({ where: { pattern: "X-(?P<id>[0-9]+)" } })).toBe(
      0,
    );
    const relative = await call("iago", "POST", "/realm/filters", {
      pattern: "Y-(?P<id>[0-9]+)",
      url_template: "/help/{id}",
    });
    expect(relative.status).toBe(200);
  });

  it("does not link what a linkifier stored before the check would make", async () => {
    const realm = await server.db.prisma.realm.findFirstOrThrow({ where: { subdomain: "" } });
    // A row from before the check, written as an older server would have.
    await server.db.prisma.linkifier.create({
      data: {
        realm_id: realm.id,
        pattern: "EVIL-(?P<id>[0-9]+)",
        url_template: "javascript:x({id})",
        order: 90,
      },
    });
    const sent = await call("hamlet", "POST", "/messages", {
      type: "stream",
      to: channels.Verona,
      topic: "linkifiers",
      content: "see EVIL-12 and Y-7",
    });
    expect(sent.status).toBe(200);
    const message = await server.db.prisma.message.findUniqueOrThrow({
      where: { id: sent.body.id as number },
    });
    expect(message.rendered_content).not.toContain("javascript:");
    expect(message.rendered_content).toContain("EVIL-12");
    expect(message.rendered_content).toContain('href="/help/7"');
  });
});

describe("typing in a crowd", () => {
  it(`sends no typing event to a channel of more than ${String(MAX_TYPING_AUDIENCE)} subscribers`, async () => {
    const created = await call("iago", "POST", "/channels/create", {
      name: "a crowd",
      subscribers: [cast.id("iago"), ...crowd],
    });
    expect(created.status).toBe(200);
    const before = await typingRows();
    const { attack, other } = await meanwhile(
      Promise.all(
        Array.from({ length: 20 }, () =>
          call("iago", "POST", "/typing", {
            type: "stream",
            op: "start",
            stream_id: created.body.id,
            topic: "noise",
          }),
        ),
      ),
    );
    expect(attack.map((r) => r.status)).toEqual(Array.from({ length: 20 }, () => 200));
    expect(other.status).toBe(200);
    expect(await typingRows()).toBe(before);
    // A small channel still hears it.
    const small = await call("hamlet", "POST", "/typing", {
      type: "stream",
      op: "start",
      stream_id: channels.Verona,
      topic: "quiet",
    });
    expect(small.status).toBe(200);
    expect(await typingRows()).toBe(before + 1);
  });

  it(`sends no typing event to a direct conversation of more than ${String(MAX_TYPING_AUDIENCE)} people`, async () => {
    const before = await typingRows();
    const reply = await call("hamlet", "POST", "/typing", { op: "start", to: crowd });
    expect(reply.status).toBe(200);
    expect(await typingRows()).toBe(before);
  });
});

describe("uploads", () => {
  const upload = (who: string, name: string, bytes: number) => {
    const { body, headers } = multipart([
      { name: "file", filename: name, type: "text/plain", data: Buffer.alloc(bytes, 97) },
    ]);
    return server.call("POST", "/api/v1/user_uploads", { ...as(who), headers, body });
  };

  it("keeps a UTF-8 file name as sent", async () => {
    const reply = await upload("othello", "résumé 日本.txt", 10);
    expect(reply.status).toBe(200);
    expect(reply.body.filename).toBe("résumé 日本.txt");
    const stored = await server.db.prisma.attachment.findFirstOrThrow({
      where: { owner_id: cast.id("othello") },
      orderBy: { id: "desc" },
    });
    expect(stored.file_name).toBe("résumé 日本.txt");
  });

  it("counts a bot's files against its owner's quota, and refuses past it", async () => {
    const bot = await call("desdemona", "POST", "/bots", {
      full_name: "Quota bot",
      short_name: "quota",
    });
    expect(bot.status).toBe(200);
    const botAuth = { auth: [`quota-bot@chat.test`, bot.body.api_key as string] as const };
    const mine = await upload("desdemona", "a.txt", 700 * 1024);
    expect(mine.status).toBe(200);
    const { body, headers } = multipart([
      { name: "file", filename: "b.txt", type: "text/plain", data: Buffer.alloc(700 * 1024, 98) },
    ]);
    const botUpload = await server.call("POST", "/api/v1/user_uploads", {
      ...botAuth,
      headers,
      body,
    });
    expect([botUpload.status, botUpload.body]).toEqual([
      400,
      apiError("Upload would exceed your maximum quota."),
    ]);
    expect(
      await server.db.prisma.attachment.count({ where: { owner_id: bot.body.user_id as number } }),
    ).toBe(0);
  });

  it("refuses an upload past the quota from its Content-Length, before reading it", async () => {
    const incoming = server.services.uploads.incoming;
    const before = await readdir(incoming).catch(() => []);
    const { body, headers } = multipart([
      {
        name: "file",
        filename: "big.txt",
        type: "text/plain",
        data: Buffer.alloc(3 * 1024 * 1024, 99),
      },
    ]);
    const replies = await Promise.all(
      Array.from({ length: 5 }, () =>
        server.call("POST", "/api/v1/user_uploads", { ...as("desdemona"), headers, body }),
      ),
    );
    for (const reply of replies)
      expect([reply.status, reply.body]).toEqual([
        400,
        apiError("Upload would exceed your maximum quota."),
      ]);
    expect(await readdir(incoming).catch(() => [])).toEqual(before);
  });
});

describe("bots per person", () => {
  it("refuses a bot past CHAT_MAX_BOTS_PER_USER and stores none", async () => {
    for (const name of ["one", "two"]) {
      const reply = await call("othello", "POST", "/bots", {
        full_name: `Bot ${name}`,
        short_name: name,
      });
      expect(reply.status).toBe(200);
    }
    const third = await call("othello", "POST", "/bots", {
      full_name: "Bot three",
      short_name: "three",
    });
    expect([third.status, third.body]).toEqual([
      400,
      apiError("You have too many bots (limit: 2)."),
    ]);
    expect(await server.db.prisma.user.count({ where: { bot_owner_id: cast.id("othello") } })).toBe(
      2,
    );
  });
});

describe("narrows too large to compile", () => {
  const flagNarrow = (narrow: unknown) =>
    call("othello", "POST", "/messages/flags/narrow", {
      anchor: "newest",
      num_before: 10,
      num_after: 0,
      narrow,
      op: "add",
      flag: "starred",
    });

  it(`refuses more than ${String(MAX_NARROW_TERMS)} terms and a huge operand, starring nothing`, async () => {
    const starred = () =>
      server.db.prisma.userMessage.count({
        where: { user_id: cast.id("othello"), flags: { gte: 2n } },
      });
    const before = await starred();
    const many = Array.from({ length: 5000 }, () => ({ operator: "search", operand: "x" }));
    const { attack, other } = await meanwhile(flagNarrow(many));
    expect([attack.status, attack.body]).toEqual([
      400,
      apiError(`narrow has too many terms (limit: ${String(MAX_NARROW_TERMS)})`),
    ]);
    expect(other.status).toBe(200);
    const huge = await flagNarrow([{ operator: "search", operand: "y".repeat(900_000) }]);
    expect(huge.status).toBe(400);
    expect(huge.body.msg).toContain(
      `A narrow operand is too long (limit: ${String(MAX_NARROW_OPERAND_LENGTH)} characters`,
    );
    const read = await server.call("GET", "/api/v1/messages", {
      ...as("othello"),
      query: {
        anchor: "newest",
        num_before: 1,
        num_after: 0,
        narrow: [{ operator: "search", operand: "z".repeat(MAX_NARROW_OPERAND_LENGTH + 1) }],
      },
    });
    expect(read.status).toBe(400);
    expect(await starred()).toBe(before);
  });
});

describe("edit history", () => {
  it("refuses an edit once the history holds its bytes, and bounds the history answer", async () => {
    // A long message whose edits each keep ~40 KB of replaced content and HTML.
    const long = (n: number) => `${String(n)} ${":smile: ".repeat(1200)}`;
    const sent = await call("hamlet", "POST", "/messages", {
      type: "stream",
      to: channels.Verona,
      topic: "history",
      content: long(0),
    });
    expect(sent.status).toBe(200);
    const id = sent.body.id as number;
    let refused: Reply | undefined;
    for (let n = 1; n < 400 && refused === undefined; n++) {
      const reply = await call("hamlet", "PATCH", `/messages/${String(id)}`, { content: long(n) });
      if (reply.status !== 200) refused = reply;
    }
    expect(refused?.status).toBe(400);
    expect(refused?.body.msg).toBe(
      `This message's edit history is full (limit: ${String(MAX_EDIT_HISTORY_BYTES / 1024 / 1024)} MiB); send a new message instead.`,
    );
    const row = await server.db.prisma.message.findUniqueOrThrow({ where: { id } });
    expect(Buffer.byteLength(JSON.stringify(row.edit_history))).toBeLessThanOrEqual(
      MAX_EDIT_HISTORY_BYTES,
    );
    const history = await call("cordelia", "GET", `/messages/${String(id)}/history`);
    expect(history.status).toBe(200);
    expect(Buffer.byteLength(history.text)).toBeLessThan(3 * MAX_EDIT_HISTORY_BYTES);
  }, 120_000);
});

describe("logins", () => {
  const login = (username: string, password: string) =>
    server.call("POST", "/api/v1/fetch_api_key", { form: { username, password } });

  it(`locks an account name after ${String(LOGIN_FAILURES)} failed logins, whatever their address`, async () => {
    const name = "othello@example.com";
    for (let i = 0; i < LOGIN_FAILURES; i++) {
      const reply = await login(name, `wrong ${String(i)}`);
      expect(reply.status).toBe(401);
    }
    // The right password too: the name is locked, and no hash is computed for it.
    const locked = await login(name.toUpperCase(), DEMO_PASSWORD);
    expect(locked.status).toBe(429);
    expect(locked.body.code).toBe("RATE_LIMIT_HIT");
    expect(Number(locked.headers["retry-after"])).toBeGreaterThan(60);
    // Another person logs in, and another's request is answered.
    const { attack, other } = await meanwhile(login("cordelia@example.com", DEMO_PASSWORD));
    expect(attack.status).toBe(200);
    expect(other.status).toBe(200);
  });
});

describe("the database pool", () => {
  it("answers one person's 100 registrations at once with 200 or 429, never 503, and serves others", async () => {
    const registrations = Promise.all(
      Array.from({ length: 100 }, () => call("hamlet", "POST", "/register", {})),
    );
    const { attack, other } = await meanwhile(registrations);
    const statuses = attack.map((r) => r.status);
    expect(statuses.filter((s) => s !== 200 && s !== 429)).toEqual([]);
    expect(statuses.filter((s) => s === 200).length).toBeGreaterThanOrEqual(2);
    // Past 2 at once the rest are refused at once (on PGlite they may not overlap at all).
    for (const refused of attack.filter((r) => r.status === 429)) {
      expect(refused.body).toMatchObject({
        code: "RATE_LIMIT_HIT",
        msg: "Too many event queue registrations at once for this user (limit: 2).",
      });
      expect(refused.headers["retry-after"]).toBe("1");
    }
    expect(other.status).toBe(200);
  });
});

describe("one person's share of the replica", () => {
  it("runs a person's requests within their share, queues the next, refuses past it, and serves others", async () => {
    const shared = await startTestServer({
      env: { CHAT_MAX_REQUESTS_PER_USER: "1", CHAT_MAX_QUEUED_PER_USER: "1" },
    });
    try {
      const hamlet = authOf(await shared.person("hamlet"));
      // An upload whose body comes slowly holds hamlet's one running slot.
      const { body, headers } = multipart([
        { name: "file", filename: "slow.txt", type: "text/plain", data: "x".repeat(4096) },
      ]);
      const slowBody = new PassThrough();
      const authorization = `Basic ${Buffer.from(`${hamlet.auth[0]}:${hamlet.auth[1]}`).toString("base64")}`;
      const slow = request(`${shared.url}/api/v1/user_uploads`, {
        method: "POST",
        headers: {
          ...headers,
          host: ROOT_HOST,
          authorization,
          "content-length": String(body.length),
        },
        body: slowBody,
      });
      slowBody.write(body.subarray(0, 300));
      // The upload is being received once its temporary file exists.
      const incoming = shared.services.uploads.incoming;
      for (let waited = 0; (await readdir(incoming).catch(() => [])).length === 0; waited += 10) {
        if (waited > 10_000) throw new Error("the upload never started");
        await sleep(10);
      }
      const second = shared.call("GET", "/api/v1/users/me", hamlet);
      const third = shared.call("GET", "/api/v1/users/me", hamlet);
      // One waits its turn; the other finds the queue full at once.
      const refused = await Promise.race([second, third]);
      expect(refused.status).toBe(429);
      expect(refused.headers["retry-after"]).toBe("1");
      expect(refused.body).toMatchObject({
        code: "RATE_LIMIT_HIT",
        msg: "Too many requests at once for this user (limit: 1 running, 1 waiting).",
      });
      // Another person is served while hamlet's share is full.
      const other = await shared.call(
        "GET",
        "/api/v1/users/me",
        authOf(await shared.person("cordelia")),
      );
      expect(other.status).toBe(200);
      slowBody.end(body.subarray(300));
      expect((await slow).statusCode).toBe(200);
      const statuses = (await Promise.all([second, third])).map((r) => r.status).sort();
      expect(statuses).toEqual([200, 429]);
    } finally {
      await shared.close();
    }
  });
});

describe("the memory budget", () => {
  it("refuses new requests with 503 while the process is over it, storing nothing; health checks answer", async () => {
    // 1 MiB: the test process is always over it.
    const tight = await startTestServer({ env: { CHAT_MEMORY_BUDGET_MB: "1" } });
    try {
      const hamlet = authOf(await tight.person("hamlet"));
      const before = await tight.db.prisma.message.count();
      const refused = await tight.call("POST", "/api/v1/messages", {
        ...hamlet,
        form: { type: "stream", to: "Verona", topic: "memory", content: "not stored" },
      });
      expect(refused.status).toBe(503);
      expect(refused.headers["retry-after"]).toBe("2");
      expect(refused.body).toEqual({
        result: "error",
        code: "SERVICE_UNAVAILABLE",
        msg: "Service unavailable: the server is short of memory; try again shortly",
      });
      expect(await tight.db.prisma.message.count()).toBe(before);
      const logins = await tight.call("POST", "/api/v1/fetch_api_key", {
        form: { username: "hamlet@example.com", password: "x" },
      });
      expect(logins.status).toBe(503);
      const health = await request(`${tight.url}/healthz`, { headers: { host: ROOT_HOST } });
      expect(health.statusCode).toBe(200);
      await health.body.dump();
    } finally {
      await tight.close();
    }
    // With the default budget, the same send goes through.
    const sent = await call("hamlet", "POST", "/messages", {
      type: "stream",
      to: channels.Verona,
      topic: "memory",
      content: "stored",
    });
    expect(sent.status).toBe(200);
  });
});

describe("a fetch of heavy messages", () => {
  it("stops GET /messages at its byte budget nearest the anchor, and the rest is read by the next fetch", async () => {
    const small = await startTestServer({ env: { CHAT_MAX_FETCH_MIB: "1" } });
    try {
      const hamlet = authOf(await small.person("hamlet"));
      // 1,250 emoji: 10,000 characters, about 110 KB of HTML each.
      const heavy = ":smile: ".repeat(1250).trim();
      const sent: number[] = [];
      for (let i = 0; i < 16; i++) {
        const reply = await small.call("POST", "/api/v1/messages", {
          ...hamlet,
          form: { type: "stream", to: "Denmark", topic: "heavy", content: heavy },
        });
        expect(reply.status).toBe(200);
        sent.push(reply.body.id as number);
      }
      const narrow = JSON.stringify([{ operator: "topic", operand: "heavy" }]);
      const first = await small.call("GET", "/api/v1/messages", {
        ...hamlet,
        query: { anchor: "newest", num_before: 16, num_after: 0, narrow },
      });
      expect(first.status).toBe(200);
      const got = (first.body.messages as { id: number; content: string }[]).map((m) => m.id);
      expect(got.length).toBeGreaterThan(1);
      expect(got.length).toBeLessThan(16);
      // The newest ones, in order, and the answer says older ones remain.
      expect(got).toEqual(sent.slice(-got.length));
      expect(first.body.found_oldest).toBe(false);
      expect(first.body.found_newest).toBe(true);
      const text = (first.body.messages as { content: string }[]).reduce(
        (sum, m) => sum + Buffer.byteLength(m.content),
        0,
      );
      expect(text).toBeLessThanOrEqual(1024 * 1024);
      // The next fetch, before the oldest one received, carries on.
      const next = await small.call("GET", "/api/v1/messages", {
        ...hamlet,
        query: { anchor: got[0], include_anchor: false, num_before: 16, num_after: 0, narrow },
      });
      const more = (next.body.messages as { id: number }[]).map((m) => m.id);
      expect(more).toEqual(sent.slice(-got.length - more.length, -got.length));
      // matches_narrow has the same budget: the oldest that fit, the rest left out.
      const matches = await small.call("GET", "/api/v1/messages/matches_narrow", {
        ...hamlet,
        query: { msg_ids: JSON.stringify(sent), narrow },
      });
      expect(matches.status).toBe(200);
      const matched = Object.keys(matches.body.messages as object).map(Number);
      expect(matched.length).toBeGreaterThan(1);
      expect(matched).toEqual(sent.slice(0, matched.length));
    } finally {
      await small.close();
    }
  });
});

describe("subscriptions in a crowded realm", () => {
  it("subscribes a person to 65 channels of 3,000 members each at once, and another is served meanwhile", async () => {
    const crowded = await startTestServer();
    try {
      const db = crowded.db.prisma;
      const realm = await db.realm.findFirstOrThrow({ where: { subdomain: "" } });
      await db.$executeRawUnsafe(
        `INSERT INTO users (realm_id, email, delivery_email, full_name, api_key)
         SELECT $1, 'crowd' || n || '@example.com', 'crowd' || n || '@example.com',
                'Crowd ' || n, md5('crowd' || n)
           FROM generate_series(1, 3000) AS n`,
        realm.id,
      );
      await insertChannelCopies(
        (sql, params) => db.$queryRawUnsafe<{ id: number }[]>(sql, ...params),
        realm.id,
        "crowded",
        65,
      );
      await db.$executeRawUnsafe(
        `INSERT INTO subscriptions (user_id, channel_id)
         SELECT u.id, c.id FROM users u CROSS JOIN channels c
          WHERE u.email LIKE 'crowd%' AND c.name LIKE 'crowded-%'`,
      );
      const hamletPerson = await crowded.person("hamlet");
      const hamlet = authOf(hamletPerson);
      const cordelia = authOf(await crowded.person("cordelia"));
      const names = Array.from({ length: 65 }, (_, i) => ({ name: `crowded-${String(i + 1)}` }));
      const [subscribed, other] = await Promise.all([
        crowded.call("POST", "/api/v1/users/me/subscriptions", {
          ...hamlet,
          form: { subscriptions: JSON.stringify(names) },
        }),
        crowded.call("GET", "/api/v1/users/me", cordelia),
      ]);
      expect(subscribed.status).toBe(200);
      expect(Object.values(subscribed.body.subscribed as object).flat()).toHaveLength(65);
      expect(other.status).toBe(200);
      expect(
        await db.subscription.count({
          where: { user_id: hamletPerson.id, channel: { name: { startsWith: "crowded-" } } },
        }),
      ).toBe(65);
    } finally {
      await crowded.close();
    }
  });

  it("refuses a channel for more than 1,000 named people, and makes none", async () => {
    const principals = Array.from({ length: 1001 }, (_, i) => `nobody${String(i)}@example.com`);
    const reply = await call("iago", "POST", "/users/me/subscriptions", {
      subscriptions: JSON.stringify([{ name: "too many named" }]),
      principals: JSON.stringify(principals),
    });
    expect(reply.status).toBe(400);
    expect(reply.body).toEqual(apiError("Too many users (limit: 1000)"));
    expect(await server.db.prisma.channel.count({ where: { name: "too many named" } })).toBe(0);
  });
});

describe("reminders due at once", () => {
  it("delivers one per person per round: one person's hundreds delay no one else's", async () => {
    const target = await call("hamlet", "POST", "/messages", {
      type: "stream",
      to: channels.Verona,
      topic: "remind me",
      content: "remember this",
    });
    const messageId = target.body.id as number;
    const soon = Math.floor(Date.now() / 1000) + 2;
    const realm = await server.db.prisma.realm.findFirstOrThrow({ where: { subdomain: "" } });
    // 300 of iago's, all due before cordelia's one.
    await server.db.prisma.reminder.createMany({
      data: Array.from({ length: 300 }, (_, i) => ({
        realm_id: realm.id,
        user_id: cast.id("iago"),
        message_id: messageId,
        scheduled_timestamp: new Date((soon - 100 + i / 10) * 1000),
      })),
    });
    const hers = await call("cordelia", "POST", "/reminders", {
      message_id: messageId,
      scheduled_delivery_timestamp: soon,
    });
    expect(hers.status).toBe(200);
    const later = new Date((soon + 1) * 1000);
    expect(await deliverDueReminders(server.db, later, 60_000)).toBe(301);
    const delivered = await server.db.prisma.reminder.findMany({
      where: { delivered: true, user_id: { in: [cast.id("iago"), cast.id("cordelia")] } },
      orderBy: { delivered_message_id: "asc" },
      select: { user_id: true },
    });
    // Cordelia's is in the first round, among the first two sent.
    expect(delivered.slice(0, 2).map((r) => r.user_id)).toContain(cast.id("cordelia"));
  }, 120_000);
});
