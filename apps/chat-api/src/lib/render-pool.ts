/**
 * Where every render runs: a pool of worker threads (piscina), so that no
 * content, however crafted, holds the server's own thread. Each render has a
 * time limit counted from the moment its thread takes it up, and the thread is
 * terminated (and replaced) when the render passes it; its HTML has a size
 * limit and its thread a heap limit. Renders wait for a free thread in one
 * queue, bounded in all and per person, and people take turns: a person has
 * one render running at a time, and their next waits for the others' in turn,
 * so that nobody holds more than one thread nor makes others wait behind their
 * queue; text the server writes itself (notices, descriptions) goes ahead of
 * people's renders.
 */
import { availableParallelism } from "node:os";
import { extname, join } from "node:path";
import { JsonableError, RateLimitedError } from "@repo/envelope";
import { Piscina } from "piscina";
import {
  RENDER_TIME_LIMIT_MS,
  RENDER_TIMEOUT_MESSAGE,
  type RenderContext,
  type RenderResult,
} from "./markdown/context";
import type { RenderReply, RenderTask } from "./render-worker";

/** How a pool is sized and bounded (the CHAT_RENDER_* settings). */
export interface RenderPoolSettings {
  /** Worker threads, started when first needed. */
  threads: number;
  /** How long a thread may wait for work before it ends (a later render starts one again). */
  idleMs: number;
  /** How long one render may run on its thread, in milliseconds. */
  timeLimitMs: number;
  /** Renders of people's content that may wait for a thread, everyone's together. */
  queueLimit: number;
  /** Renders one person may have running (one at most) or waiting at once. */
  perPersonLimit: number;
  /** The longest HTML a render may give, in UTF-8 bytes. */
  maxHtmlBytes: number;
  /** Each thread's heap (V8's old generation), in MiB: a render that needs more ends its thread. */
  threadHeapMb: number;
}

/**
 * The defaults. A person's renders beyond the one running wait their turn
 * after everyone else's, so the per-person limit only bounds what one person
 * may queue (a bot sending in parallel queues a few dozen); the queue's limit
 * bounds the memory of waiting renders (10 KB of content each, and the
 * lookups). Zulip allows a render 5 s; ours take 25 ms at most for the
 * longest message of ordinary Markdown. Zulip refuses rendered content past
 * 100 times its longest message (1,000,000 characters); this limit is in bytes.
 */
export const DEFAULT_RENDER_SETTINGS: RenderPoolSettings = {
  threads: Math.max(2, Math.min(4, availableParallelism())),
  idleMs: 300_000,
  timeLimitMs: RENDER_TIME_LIMIT_MS,
  queueLimit: 1000,
  perPersonLimit: 32,
  maxHtmlBytes: 1_000_000,
  threadHeapMb: 128,
};

/** Who a render is for: the person whose content it is, or undefined for text the server wrote. */
export type Requester = number | undefined;

/** How long a render may wait for its thread to start it (a thread being replaced starts first). */
const START_LIMIT_MS = 10_000;

const workerFile = join(__dirname, `render-worker${extname(__filename)}`);
// From TypeScript sources (tests, benchmarks), each thread compiles the worker as it loads it.
const workerExecArgv = workerFile.endsWith(".ts")
  ? ["--conditions=@repo/source", "--require", "@swc-node/register"]
  : [];

interface Waiting {
  task: RenderTask;
  requester: Requester;
  resolve: (result: RenderResult) => void;
  reject: (error: unknown) => void;
}

/** What became of the renders a pool ran (for metrics and tests). */
export interface RenderCounts {
  rendered: number;
  /** Past the time limit: stopped by the render's own checks, or its thread terminated. */
  timedOut: number;
  tooLarge: number;
  /** Threads that failed (out of heap, an exception). */
  failed: number;
  /** Renders refused before running: the person's or the queue's limit. */
  refused: number;
}

/** See the module comment. */
export class RenderPool {
  private readonly piscina: Piscina<RenderTask, RenderReply>;
  private running = 0;
  /** Renders of the server's own text, waiting: they go first. */
  private readonly serverWaiting: Waiting[] = [];
  /**
   * People's renders waiting, by person, each in the order asked; the people
   * in turn (a person served goes to the back), so that each person's next
   * render waits for one round of the others, however many they queued.
   */
  private readonly waiting = new Map<number, Waiting[]>();
  private waitingCount = 0;
  /** Renders each person has running or waiting. */
  private readonly held = new Map<number, number>();
  /** The people with a render running. */
  private readonly busy = new Set<number>();
  /** Told when the last render ends ({@link retire}). */
  private readonly idle: (() => void)[] = [];
  readonly counts: RenderCounts = { rendered: 0, timedOut: 0, tooLarge: 0, failed: 0, refused: 0 };

  constructor(readonly settings: RenderPoolSettings) {
    this.piscina = new Piscina({
      filename: workerFile,
      // At the server's CPU priority: the time limit runs on the clock. At
      // nice +5, a formula that renders in 0.1 s passed the 1 s limit while
      // two test runs shared the machine's two cores.
      // Threads start when first needed (a server that renders nothing keeps
      // none) and end after `idleMs` without work: each holds about 19 MB
      // resident, and starting one again costs its next render about 110 ms
      // (from TypeScript sources, a second of compiling).
      minThreads: 0,
      maxThreads: settings.threads,
      idleTimeout: settings.idleMs,
      execArgv: workerExecArgv,
      resourceLimits: { maxOldGenerationSizeMb: settings.threadHeapMb },
    });
    // A thread that fails between renders (out of heap as it is terminated) is
    // replaced by piscina; its render, if any, was refused already.
    this.piscina.on("error", () => {
      this.counts.failed++;
    });
  }

  /** Threads started and ready or starting (piscina's own list). */
  get threadCount(): number {
    return this.piscina.threads.length;
  }

  /**
   * Renders `content` with `context` on a thread. Refused with
   * `Unable to render message` past the time or size limit or when its thread
   * fails, and with 429 when the person already has their share of renders
   * going or the queue is full.
   */
  render(content: string, context: RenderContext, requester: Requester): Promise<RenderResult> {
    const { settings } = this;
    if (requester !== undefined) {
      const held = this.held.get(requester) ?? 0;
      const mustWait = this.running >= settings.threads || this.busy.has(requester);
      const queueFull = mustWait && this.waitingCount >= settings.queueLimit;
      if (held >= settings.perPersonLimit || queueFull) {
        this.counts.refused++;
        return Promise.reject(new RateLimitedError(settings.timeLimitMs / 1000));
      }
      this.held.set(requester, held + 1);
    }
    const task: RenderTask = {
      content,
      context,
      timeLimitMs: settings.timeLimitMs,
      maxHtmlBytes: settings.maxHtmlBytes,
      started: new BigInt64Array(new SharedArrayBuffer(8)),
    };
    const result = new Promise<RenderResult>((resolve, reject) => {
      const entry = { task, requester, resolve, reject };
      // The server's own text goes first: it renders in a millisecond, often inside a transaction.
      if (requester === undefined) this.serverWaiting.push(entry);
      else {
        const queue = this.waiting.get(requester);
        if (queue === undefined) this.waiting.set(requester, [entry]);
        else queue.push(entry);
        this.waitingCount++;
      }
    });
    this.pump();
    if (requester === undefined) return result;
    return result.finally(() => {
      const held = (this.held.get(requester) ?? 1) - 1;
      if (held === 0) this.held.delete(requester);
      else this.held.set(requester, held);
    });
  }

  /** Stops every thread at once; renders running or waiting are refused. */
  async close(): Promise<void> {
    const waiting = [...this.serverWaiting.splice(0), ...[...this.waiting.values()].flat()];
    this.waiting.clear();
    this.waitingCount = 0;
    for (const entry of waiting) entry.reject(new JsonableError(RENDER_TIMEOUT_MESSAGE));
    await this.piscina.destroy();
  }

  /** Stops every thread once the renders running or waiting are done. */
  async retire(): Promise<void> {
    while (this.running > 0 || this.waitingCount > 0 || this.serverWaiting.length > 0)
      await new Promise<void>((resolve) => this.idle.push(resolve));
    await this.piscina.destroy();
  }

  /**
   * While threads are free: the server's renders, then the next render of
   * the first person in turn who has none running.
   */
  private pump(): void {
    while (this.running < this.settings.threads) {
      const next = this.serverWaiting.shift() ?? this.nextInTurn();
      if (next === undefined) return;
      this.start(next);
    }
  }

  private nextInTurn(): Waiting | undefined {
    for (const [person, queue] of this.waiting) {
      if (this.busy.has(person)) continue;
      const next = queue.shift();
      // To the back of the turn (a Map keeps the order keys were set in).
      this.waiting.delete(person);
      if (queue.length > 0) this.waiting.set(person, queue);
      if (next === undefined) continue;
      this.waitingCount--;
      return next;
    }
    return undefined;
  }

  private start({ task, requester, resolve, reject }: Waiting): void {
    this.running++;
    if (requester !== undefined) this.busy.add(requester);
    const abort = new AbortController();
    const timer = this.watch(task.started, abort);
    this.piscina
      .run(task, { signal: abort.signal })
      .then((reply) => {
        if (reply.kind === "rendered") {
          this.counts.rendered++;
          resolve({
            html: reply.html,
            mentionedUserIds: new Set(reply.mentionedUserIds),
            mentionedGroupIds: new Set(reply.mentionedGroupIds),
            wildcard: reply.wildcard,
          });
          return;
        }
        if (reply.reason === "time") this.counts.timedOut++;
        else this.counts.tooLarge++;
        reject(new JsonableError(RENDER_TIMEOUT_MESSAGE));
      })
      .catch(() => {
        if (abort.signal.aborted) this.counts.timedOut++;
        else this.counts.failed++;
        reject(new JsonableError(RENDER_TIMEOUT_MESSAGE));
      })
      .finally(() => {
        clearTimeout(timer.current);
        this.running--;
        if (requester !== undefined) {
          this.busy.delete(requester);
          // Served: to the back of the turn.
          const queue = this.waiting.get(requester);
          if (queue !== undefined) {
            this.waiting.delete(requester);
            this.waiting.set(requester, queue);
          }
        }
        this.pump();
        if (this.running === 0) for (const resolve of this.idle.splice(0)) resolve();
      });
  }

  /**
   * Aborts the render (piscina then terminates its thread) once it has run
   * for the time limit, counted from when its thread stamped `started`; or
   * when no thread has started it within {@link START_LIMIT_MS}.
   */
  private watch(
    started: BigInt64Array,
    abort: AbortController,
  ): { current: NodeJS.Timeout | undefined } {
    const limit = this.settings.timeLimitMs;
    const sent = Date.now();
    const timer: { current: NodeJS.Timeout | undefined } = { current: undefined };
    const check = (): void => {
      const stamp = Number(Atomics.load(started, 0));
      const now = Date.now();
      const due = stamp === 0 ? sent + START_LIMIT_MS : stamp + limit;
      if (now >= due) abort.abort();
      // Not started yet: looked at again a time limit later.
      else timer.current = setTimeout(check, stamp === 0 ? Math.min(limit, due - now) : due - now);
    };
    timer.current = setTimeout(check, limit);
    return timer;
  }
}

let shared: RenderPool | undefined;

const sameSettings = (a: RenderPoolSettings, b: RenderPoolSettings): boolean =>
  (Object.keys(a) as (keyof RenderPoolSettings)[]).every((key) => a[key] === b[key]);

/**
 * Sets the process's render pool up with `settings` (the service does at
 * start); a pool with other settings is replaced, and closed once idle.
 */
export function configureRenderPool(settings: RenderPoolSettings): RenderPool {
  configured = settings;
  if (shared !== undefined && sameSettings(shared.settings, settings)) return shared;
  const old = shared;
  shared = new RenderPool(settings);
  if (old !== undefined) void old.retire();
  return shared;
}

/** The settings the service configured (the defaults until it does). */
let configured: RenderPoolSettings = DEFAULT_RENDER_SETTINGS;

/** The process's render pool (made again after {@link closeRenderPool}). */
export function renderPool(): RenderPool {
  shared ??= new RenderPool(configured);
  return shared;
}

/** Stops the process's render pool's threads (the server's stop); renders still waiting are refused. */
export async function closeRenderPool(): Promise<void> {
  const pool = shared;
  shared = undefined;
  await pool?.close();
}

/** Renders `content` for `requester` on the process's pool ({@link RenderPool.render}). */
export function render(
  content: string,
  context: RenderContext,
  requester: Requester,
): Promise<RenderResult> {
  return renderPool().render(content, context, requester);
}
