import { setTimeout as sleep } from "node:timers/promises";
import { renderPool } from "../src/lib/render-pool";
import {
  type Cast,
  type Reply,
  type TestServer,
  apiError,
  channelIds,
  loadCast,
  startTestServer,
} from "./support/server";

/**
 * Content built to make rendering take minutes or gigabytes (issue 46), sent
 * by the demo realm's guest and others through every path that renders. Each
 * is answered (400 `Unable to render message`, or rendered harmlessly), stores
 * nothing, and while it renders another person's requests are answered
 * within a second: renders run on the pool's threads, never on the server's.
 */
let server: TestServer;
let cast: Cast;
let channels: Record<string, number>;

beforeAll(async () => {
  // The per-user request limit is raised so that the probes below are never
  // refused; the render pool holds four renders of a person (32 by default),
  // so that a flood passes it in a few seconds; rendered HTML may be 200,000
  // bytes (1,000,000 by default), so that passing it takes a render of
  // milliseconds even on a busy machine.
  server = await startTestServer({
    env: {
      CHAT_RATE_LIMIT_USER_PER_MINUTE: "100000",
      CHAT_RENDER_PER_USER_LIMIT: "4",
      CHAT_RENDER_MAX_HTML_BYTES: "200000",
    },
  });
  cast = await loadCast(server, ["polonius", "hamlet", "othello", "iago", "cordelia"]);
  channels = await channelIds(server);
});

afterAll(() => server.close());

const call = (who: string, method: string, path: string, form: Record<string, string> = {}) =>
  server.call(method, `/api/v1${path}`, { ...cast.as(who), form });

const RENDER_REFUSED = apiError("Unable to render message");

/** The issue's bomb: 201 expansions of nested macros, 80,000 symbols (634 characters). */
const issueBomb = (width: number, copies: number): string =>
  `$$\\def\\a{${"x".repeat(width)}}\\def\\b{${"\\a".repeat(100)}}\\def\\c{${"\\b".repeat(copies)}}\\c$$`;

/**
 * Its form under KaTeX's expansion limit: 99 expansions of `width` symbols
 * each. Unbounded, width 400 (618 characters) took 2.9 s of one core and
 * width 4,000 (4.2 KB) 120 s.
 */
const wideBomb = (width: number): string =>
  `$$\\def\\a{${"x".repeat(width)}}\\def\\b{${"\\a".repeat(98)}}\\b$$`;

/** 2,400 characters whose HTML is 325 KB (KaTeX's markup of 200 formulas, 1,627 bytes each). */
const bloat = "$$\\sqrt x$$ ".repeat(200);

/**
 * Runs `attack` while othello asks for his own profile every 50 ms, and
 * returns its answer with the slowest of those answers (every one a 200).
 */
async function probed(attack: () => Promise<Reply>): Promise<{ reply: Reply; worstMs: number }> {
  const running = { done: false };
  const probe = (async () => {
    let worst = 0;
    do {
      const start = performance.now();
      const reply = await call("othello", "GET", "/users/me");
      expect(reply.status).toBe(200);
      worst = Math.max(worst, performance.now() - start);
      await sleep(50);
    } while (!running.done);
    return worst;
  })();
  const reply = await attack().finally(() => {
    running.done = true;
  });
  return { reply, worstMs: await probe };
}

/** Messages stored with `content`. */
const stored = (content: string) => server.db.prisma.message.count({ where: { content } });

describe("the bombs the render pool stops", () => {
  it.each([
    ["width 400", wideBomb(400)],
    ["width 4,000", wideBomb(4000)],
  ])("POST /messages/render of a %s bomb is refused", async (_name, content) => {
    const { reply, worstMs } = await probed(() =>
      call("polonius", "POST", "/messages/render", { content }),
    );
    expect([reply.status, reply.body]).toEqual([400, RENDER_REFUSED]);
    expect(worstMs).toBeLessThan(1000);
  });

  it.each([
    ["width 400", wideBomb(400)],
    ["width 4,000", wideBomb(4000)],
  ])("a direct message of a %s bomb is refused and not stored", async (_name, content) => {
    const { reply, worstMs } = await probed(() =>
      call("polonius", "POST", "/messages", {
        type: "direct",
        to: JSON.stringify([cast.id("othello")]),
        content,
      }),
    );
    expect([reply.status, reply.body]).toEqual([400, RENDER_REFUSED]);
    expect(worstMs).toBeLessThan(1000);
    expect(await stored(content)).toBe(0);
  });

  it("a channel message of a bomb is refused and not stored", async () => {
    const content = wideBomb(2000);
    const { reply, worstMs } = await probed(() =>
      call("hamlet", "POST", "/messages", {
        type: "stream",
        to: String(channels.Denmark),
        topic: "bombs",
        content,
      }),
    );
    expect([reply.status, reply.body]).toEqual([400, RENDER_REFUSED]);
    expect(worstMs).toBeLessThan(1000);
    expect(await stored(content)).toBe(0);
  });

  it("an edit to a bomb is refused and leaves the message as it was", async () => {
    const sent = await call("polonius", "POST", "/messages", {
      type: "direct",
      to: JSON.stringify([cast.id("othello")]),
      content: "harmless",
    });
    expect(sent.status).toBe(200);
    const id = sent.body.id as number;
    const content = wideBomb(4000);
    const { reply, worstMs } = await probed(() =>
      call("polonius", "PATCH", `/messages/${String(id)}`, { content }),
    );
    expect([reply.status, reply.body]).toEqual([400, RENDER_REFUSED]);
    expect(worstMs).toBeLessThan(1000);
    const message = await server.db.prisma.message.findUniqueOrThrow({ where: { id } });
    expect([message.content, message.rendered_content, message.last_edit_time]).toEqual([
      "harmless",
      "<p>harmless</p>",
      null,
    ]);
  });

  it("an edit by someone who may not edit is refused for that first", async () => {
    const sent = await call("othello", "POST", "/messages", {
      type: "direct",
      to: JSON.stringify([cast.id("polonius")]),
      content: "not yours",
    });
    const reply = await call("polonius", "PATCH", `/messages/${String(sent.body.id)}`, {
      content: wideBomb(400),
    });
    expect([reply.status, reply.body]).toEqual([
      400,
      apiError("You don't have permission to edit this message"),
    ]);
  });

  it("a new channel with a bomb description is refused and not made", async () => {
    const { reply, worstMs } = await probed(() =>
      call("hamlet", "POST", "/channels/create", {
        name: "bombed",
        description: wideBomb(700),
        subscribers: JSON.stringify([cast.id("hamlet")]),
      }),
    );
    expect([reply.status, reply.body]).toEqual([400, RENDER_REFUSED]);
    expect(worstMs).toBeLessThan(1000);
    expect(await server.db.prisma.channel.count({ where: { name: "bombed" } })).toBe(0);
  });

  it("a subscription that would make channels with a bomb description makes none", async () => {
    const { reply, worstMs } = await probed(() =>
      call("hamlet", "POST", "/users/me/subscriptions", {
        subscriptions: JSON.stringify([
          { name: "fine one", description: "all *good*" },
          { name: "bombed two", description: wideBomb(700) },
          { name: "never three", description: wideBomb(700) },
        ]),
      }),
    );
    expect([reply.status, reply.body]).toEqual([400, RENDER_REFUSED]);
    expect(worstMs).toBeLessThan(1000);
    const made = await server.db.prisma.channel.count({
      where: { name: { in: ["fine one", "bombed two", "never three"] } },
    });
    expect(made).toBe(0);
  });

  it("a channel's new bomb description is refused and the old one kept", async () => {
    const before = await server.db.prisma.channel.findUniqueOrThrow({
      where: { id: channels.Verona },
    });
    const { reply, worstMs } = await probed(() =>
      call("iago", "PATCH", `/streams/${String(channels.Verona)}`, {
        description: wideBomb(700),
      }),
    );
    expect([reply.status, reply.body]).toEqual([400, RENDER_REFUSED]);
    expect(worstMs).toBeLessThan(1000);
    const after = await server.db.prisma.channel.findUniqueOrThrow({
      where: { id: channels.Verona },
    });
    expect([after.description, after.rendered_description]).toEqual([
      before.description,
      before.rendered_description,
    ]);
  });

  it("a channel folder with a bomb description is refused and not made", async () => {
    const { reply, worstMs } = await probed(() =>
      call("iago", "POST", "/channel_folders/create", {
        name: "bombs",
        description: wideBomb(700),
      }),
    );
    expect([reply.status, reply.body]).toEqual([400, RENDER_REFUSED]);
    expect(worstMs).toBeLessThan(1000);
    expect(await server.db.prisma.channelFolder.count({ where: { name: "bombs" } })).toBe(0);
  });

  it("a reminder whose note is a bomb is refused and not kept", async () => {
    const sent = await call("othello", "POST", "/messages", {
      type: "direct",
      to: JSON.stringify([cast.id("polonius")]),
      content: "remind me",
    });
    const { reply, worstMs } = await probed(() =>
      call("polonius", "POST", "/reminders", {
        message_id: String(sent.body.id),
        scheduled_delivery_timestamp: String(Math.floor(Date.now() / 1000) + 3600),
        note: wideBomb(700),
      }),
    );
    expect([reply.status, reply.body]).toEqual([400, RENDER_REFUSED]);
    expect(worstMs).toBeLessThan(1000);
    expect(await server.db.prisma.reminder.count({ where: { user_id: cast.id("polonius") } })).toBe(
      0,
    );
  });

  it("a realm description that cannot render is shown as its text, rendered once", async () => {
    const description = wideBomb(1000);
    const realm = await server.db.prisma.realm.findFirstOrThrow({ where: { subdomain: "" } });
    await server.db.prisma.realm.update({ where: { id: realm.id }, data: { description } });
    server.services.realms.clear();
    try {
      const { counts } = renderPool();
      const stopped = () => counts.timedOut + counts.failed;
      const before = stopped();
      const { reply, worstMs } = await probed(() => server.call("GET", "/api/v1/server_settings"));
      expect(reply.status).toBe(200);
      expect(worstMs).toBeLessThan(1000);
      // Nothing in it is special to HTML.
      const escaped = `<p>${description}</p>`;
      expect(reply.body.realm_description).toBe(escaped);
      const registered = await call("othello", "POST", "/register", {
        fetch_event_types: JSON.stringify(["realm"]),
      });
      expect(registered.body.realm_description).toBe(escaped);
      // One render for both readers: the text's failure is kept.
      expect(stopped()).toBe(before + 1);
    } finally {
      await server.db.prisma.realm.update({
        where: { id: realm.id },
        data: { description: realm.description },
      });
      server.services.realms.clear();
    }
  });
});

describe("bombs KaTeX's own bounds stop", () => {
  it.each([
    ["the issue's 634 characters", issueBomb(400, 2)],
    ["1,034 characters", issueBomb(800, 2)],
    ["2.6 KB", issueBomb(2400, 4)],
  ])("%s past KaTeX's expansion limit are stored as TeX errors", async (_name, content) => {
    const { reply, worstMs } = await probed(() =>
      call("polonius", "POST", "/messages", {
        type: "direct",
        to: JSON.stringify([cast.id("othello")]),
        content,
      }),
    );
    expect(reply.status).toBe(200);
    expect(worstMs).toBeLessThan(1000);
    const message = await server.db.prisma.message.findUniqueOrThrow({
      where: { id: reply.body.id as number },
    });
    expect(message.rendered_content).toMatch(/^<p><span class="tex-error">\$\$\\def/);
  });
});

describe("the rendered HTML's size limit", () => {
  it("refuses a message whose HTML passes the limit, and stores nothing", async () => {
    const { counts } = renderPool();
    const tooLarge = counts.tooLarge;
    const reply = await call("hamlet", "POST", "/messages", {
      type: "direct",
      to: JSON.stringify([cast.id("othello")]),
      content: bloat,
    });
    expect([reply.status, reply.body]).toEqual([400, RENDER_REFUSED]);
    expect(await stored(bloat)).toBe(0);
    expect(counts.tooLarge).toBe(tooLarge + 1);
    // Under the limit it renders: 100 formulas, 163 KB.
    const fewer = "$$\\sqrt x$$ ".repeat(100);
    const preview = await call("hamlet", "POST", "/messages/render", { content: fewer });
    expect(preview.status).toBe(200);
    expect(Buffer.byteLength(preview.body.rendered as string)).toBeLessThan(200_000);
  });
});

describe("a flood of bombs", () => {
  it("answers the flooder 429 or a render error, and everyone else as usual", async () => {
    const content = wideBomb(4000);
    const flood = () =>
      Promise.all(
        Array.from({ length: 12 }, () => call("polonius", "POST", "/messages/render", { content })),
      );
    let answers: Reply[] = [];
    const { reply, worstMs } = await probed(async () => {
      const flooding = flood();
      // Someone else's message while the flood renders: sent, rendered, stored.
      const normal = await call("cordelia", "POST", "/messages", {
        type: "direct",
        to: JSON.stringify([cast.id("othello")]),
        content: "Still **here**, $$x^2$$ and all.",
      });
      answers = await flooding;
      return normal;
    });
    expect(worstMs).toBeLessThan(1000);
    expect(reply.status).toBe(200);
    const message = await server.db.prisma.message.findUniqueOrThrow({
      where: { id: reply.body.id as number },
    });
    expect(message.rendered_content).toContain("<strong>here</strong>");
    const outcomes = answers.map((a) => `${String(a.status)} ${String(a.body.code)}`);
    for (const outcome of outcomes)
      expect(["400 BAD_REQUEST", "429 RATE_LIMIT_HIT"]).toContain(outcome);
    // The person's share of the replica (CHAT_MAX_REQUESTS_PER_USER, 4) lets four
    // run at a time and queues the rest; the render pool refuses past its own
    // share (429) what gets through: every bomb is refused, none rendered.
    expect(outcomes).toHaveLength(12);
    expect(outcomes.filter((o) => o === "400 BAD_REQUEST").length).toBeGreaterThanOrEqual(1);
    for (const limited of answers.filter((a) => a.status === 429))
      expect(limited.headers["retry-after"]).toBe("1");
    // The pool is whole again: a render after the flood.
    const after = await call("polonius", "POST", "/messages/render", { content: "*fine*" });
    expect([after.status, after.body.rendered]).toEqual([200, "<p><em>fine</em></p>"]);
  });
});
