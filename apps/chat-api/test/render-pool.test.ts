import { readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import { JsonableError, RateLimitedError } from "@repo/envelope";
import { until } from "@repo/bench-kit";
import { loadConfig, renderSettings } from "../src/lib/config";
import { EMPTY_CONTEXT, RENDER_TIMEOUT_MESSAGE } from "../src/lib/markdown";
import {
  DEFAULT_RENDER_SETTINGS,
  RenderPool,
  type RenderPoolSettings,
} from "../src/lib/render-pool";

/**
 * The render pool on its own (issue 46): the time limit counted from when a
 * thread takes a render up, people's turns, the server's text first, the
 * limits of a person's and everyone's waiting renders, and threads replaced
 * after a render is stopped. Bombs need minutes unbounded; here each is
 * stopped at the pool's time limit.
 */

/** 99 macro expansions of 4,000 symbols each: two minutes of one core, unbounded. */
const bomb = `$$\\def\\a{${"x".repeat(4000)}}\\def\\b{${"\\a".repeat(98)}}\\b$$`;

const pools: RenderPool[] = [];
const pool = (settings: Partial<RenderPoolSettings>): RenderPool => {
  const made = new RenderPool({ ...DEFAULT_RENDER_SETTINGS, timeLimitMs: 400, ...settings });
  pools.push(made);
  return made;
};

afterAll(() => Promise.all(pools.map((p) => p.close())));

/** What became of a render: its HTML, or its error's message. */
const outcome = (render: Promise<{ html: string }>): Promise<string> =>
  render.then(
    (r) => r.html,
    (error: unknown) => (error instanceof Error ? error.message : String(error)),
  );

it("renders, and stops a bomb at the time limit with Unable to render message", async () => {
  const p = pool({ threads: 1 });
  expect((await p.render("**hi** @**x**", EMPTY_CONTEXT, 1)).html).toBe(
    "<p><strong>hi</strong> @<strong>x</strong></p>",
  );
  await expect(p.render(bomb, EMPTY_CONTEXT, 1)).rejects.toEqual(
    new JsonableError(RENDER_TIMEOUT_MESSAGE),
  );
  // The stopped thread was replaced: the pool renders again.
  expect((await p.render("*again*", EMPTY_CONTEXT, 1)).html).toBe("<p><em>again</em></p>");
  expect(p.threadCount).toBe(1);
  expect(p.counts.timedOut + p.counts.failed).toBe(1);
});

it("ends a thread that waited idleMs for work, and starts one again for the next render", async () => {
  const p = pool({ threads: 1, idleMs: 300 });
  expect(p.threadCount).toBe(0);
  expect((await p.render("*first*", EMPTY_CONTEXT, 1)).html).toBe("<p><em>first</em></p>");
  expect(p.threadCount).toBe(1);
  await until(() => p.threadCount === 0, 10_000, "the idle thread to end", 50);
  expect((await p.render("*later*", EMPTY_CONTEXT, 1)).html).toBe("<p><em>later</em></p>");
  expect(p.threadCount).toBe(1);
});

it("reads CHAT_RENDER_THREAD_IDLE_SECONDS as the idle time, from 1 s to a day, and refuses the rest", () => {
  expect(renderSettings(loadConfig({})).idleMs).toBe(300_000);
  expect(renderSettings(loadConfig({ CHAT_RENDER_THREAD_IDLE_SECONDS: "1" })).idleMs).toBe(1000);
  expect(renderSettings(loadConfig({ CHAT_RENDER_THREAD_IDLE_SECONDS: "86400" })).idleMs).toBe(
    86_400_000,
  );
  for (const bad of ["0", "-5", "86401", "1.5", "soon"])
    expect(() => loadConfig({ CHAT_RENDER_THREAD_IDLE_SECONDS: bad })).toThrow(
      /CHAT_RENDER_THREAD_IDLE_SECONDS/,
    );
});

it("counts a render's time from when its thread takes it up, not from when it was asked", async () => {
  const p = pool({ threads: 1 });
  const first = outcome(p.render(bomb, EMPTY_CONTEXT, 1));
  // Waits the whole time limit behind the bomb, then renders in a millisecond.
  const second = outcome(p.render("*waited*", EMPTY_CONTEXT, 2));
  expect(await Promise.all([first, second])).toEqual([
    RENDER_TIMEOUT_MESSAGE,
    "<p><em>waited</em></p>",
  ]);
});

it("takes people in turn: a flooder's queue does not hold the others back", async () => {
  const p = pool({ threads: 1 });
  const finished: string[] = [];
  const track = (name: string, render: Promise<unknown>) =>
    render.then(
      () => finished.push(name),
      () => finished.push(name),
    );
  const flood = [1, 2, 3].map((n) => track(`bomb ${String(n)}`, p.render(bomb, EMPTY_CONTEXT, 7)));
  const other = track("other", p.render("hello", EMPTY_CONTEXT, 8));
  const server = track("server", p.render("notice", EMPTY_CONTEXT, undefined));
  await Promise.all([...flood, other, server]);
  // The server's text first once the thread is free, then the other person, then the flood.
  expect(finished).toEqual(["bomb 1", "server", "other", "bomb 2", "bomb 3"]);
});

it("refuses a person's renders past their limit, and everyone's past the queue's, with 429", async () => {
  const p = pool({ threads: 1, perPersonLimit: 2, queueLimit: 2 });
  const held = [p.render(bomb, EMPTY_CONTEXT, 1), p.render(bomb, EMPTY_CONTEXT, 1)];
  await expect(p.render("x", EMPTY_CONTEXT, 1)).rejects.toBeInstanceOf(RateLimitedError);
  // One of person 1's waits, with person 2's: the queue is full.
  const second = p.render("y", EMPTY_CONTEXT, 2);
  await expect(p.render("z", EMPTY_CONTEXT, 3)).rejects.toBeInstanceOf(RateLimitedError);
  // The server's own text is never refused.
  const notice = p.render("n", EMPTY_CONTEXT, undefined);
  expect(await Promise.all([...held, second, notice].map(outcome))).toEqual([
    RENDER_TIMEOUT_MESSAGE,
    RENDER_TIMEOUT_MESSAGE,
    "<p>y</p>",
    "<p>n</p>",
  ]);
  expect(p.counts.refused).toBe(2);
});

it("refuses HTML past its size limit, measured in UTF-8 bytes", async () => {
  const p = pool({ threads: 1, maxHtmlBytes: 1024 });
  // 300 two-byte letters: 607 bytes of HTML; 340 three-byte ones: 1,027 (347 UTF-16 units).
  expect((await p.render("é".repeat(300), EMPTY_CONTEXT, 1)).html).toBe(
    `<p>${"é".repeat(300)}</p>`,
  );
  await expect(p.render("€".repeat(340), EMPTY_CONTEXT, 1)).rejects.toEqual(
    new JsonableError(RENDER_TIMEOUT_MESSAGE),
  );
  expect(p.counts.tooLarge).toBe(1);
});

it("ends a thread that runs out of its heap, and refuses its render", async () => {
  const p = pool({ threads: 1, threadHeapMb: 32, timeLimitMs: 10_000 });
  await expect(p.render(bomb, EMPTY_CONTEXT, 1)).rejects.toEqual(
    new JsonableError(RENDER_TIMEOUT_MESSAGE),
  );
  expect(p.counts.failed).toBeGreaterThanOrEqual(1);
  expect(p.counts.timedOut).toBe(0);
  expect((await p.render("fine", EMPTY_CONTEXT, 1)).html).toBe("<p>fine</p>");
});

it("is the only way the server renders: no module but the worker calls the renderer", () => {
  const src = path.join(__dirname, "../src");
  const files = readdirSync(src, { recursive: true, encoding: "utf8" }).filter(
    (f) => f.endsWith(".ts") && !f.startsWith("gen/"),
  );
  const callers = files.filter((f) =>
    /\brenderMarkdown\(/.test(readFileSync(path.join(src, f), "utf8")),
  );
  // lib/markdown.ts defines it; lib/render-worker.ts is the one caller.
  expect(callers.sort()).toEqual(["lib/markdown.ts", "lib/render-worker.ts"]);
});
