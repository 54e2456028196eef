import { RateLimitedError } from "@repo/envelope";
import { once } from "node:events";
import { Redis } from "ioredis";
import type { Logger } from "pino";
import {
  RateLimiterMemory,
  RateLimiterRedis,
  RateLimiterRes,
  type RateLimiterAbstract,
} from "rate-limiter-flexible";

/** Who a request counts against. */
export type RateLimitKind = "user" | "ip";

/** Limits per kind: requests per window. */
export interface RateLimitRules {
  userPerMinute: number;
  ipPerMinute: number;
  /** Prefix of the counters' keys. */
  prefix: string;
}

/**
 * Failed logins one account name may have in {@link LOGIN_WINDOW_SECONDS}
 * (Zulip's `authenticate_by_username` rule: 5 in 30 minutes), whatever
 * address they come from. Past them, the name's logins answer 429 without
 * hashing anything until the window ends.
 */
export const LOGIN_FAILURES = 5;
export const LOGIN_WINDOW_SECONDS = 1800;

/** Counts requests; over the limit it throws the contract's 429. */
export interface RateLimiter {
  /** Resolves once the store can count (Redis connected, or given up on after a few seconds). */
  ready(): Promise<void>;
  /** Counts one request of `key`; returns the headers every limited response carries. */
  consume(kind: RateLimitKind, key: string): Promise<Record<string, string>>;
  /** Throws the 429 when the account name `key` has used up its failed logins. */
  checkLogin(key: string): Promise<void>;
  /** Counts a failed login of the account name `key`. */
  failLogin(key: string): Promise<void>;
  close(): Promise<void>;
}

const WINDOW_SECONDS = 60;

function headers(limit: number, result: RateLimiterRes): Record<string, string> {
  return {
    "X-RateLimit-Limit": String(limit),
    "X-RateLimit-Remaining": String(Math.max(0, result.remainingPoints)),
    "X-RateLimit-Reset": String(Math.ceil((Date.now() + result.msBeforeNext) / 1000)),
  };
}

/** No limits (`CHAT_RATE_LIMIT=off`). */
export const unlimited: RateLimiter = {
  ready: () => Promise.resolve(),
  consume: () => Promise.resolve({}),
  checkLogin: () => Promise.resolve(),
  failLogin: () => Promise.resolve(),
  close: () => Promise.resolve(),
};

/**
 * Fixed-window limits with rate-limiter-flexible: in process, or in Redis
 * (shared by every replica) when `redisUrl` is set. If Redis fails, each
 * replica falls back to counting in process rather than refusing requests.
 */
export function createRateLimiter(
  rules: RateLimitRules,
  logger: Logger,
  redisUrl?: string,
): RateLimiter {
  const redis =
    redisUrl === undefined
      ? undefined
      : new Redis(redisUrl, {
          enableOfflineQueue: false,
          maxRetriesPerRequest: 1,
          lazyConnect: false,
        });
  redis?.on("error", (error: Error) =>
    logger.warn({ err: error.message }, "rate-limit store unavailable"),
  );
  const make = (
    kind: RateLimitKind | "login",
    points: number,
    duration = WINDOW_SECONDS,
  ): RateLimiterAbstract => {
    const options = { keyPrefix: `${rules.prefix}_${kind}`, points, duration };
    if (redis === undefined) return new RateLimiterMemory(options);
    return new RateLimiterRedis({
      ...options,
      storeClient: redis,
      insuranceLimiter: new RateLimiterMemory(options),
    });
  };
  const limiters = { user: make("user", rules.userPerMinute), ip: make("ip", rules.ipPerMinute) };
  const limits = { user: rules.userPerMinute, ip: rules.ipPerMinute };
  const logins = make("login", LOGIN_FAILURES, LOGIN_WINDOW_SECONDS);
  return {
    async ready() {
      if (redis === undefined || redis.status === "ready") return;
      // Until Redis is ready every replica would count on its own; wait a little for it.
      const timeout = new Promise<"timeout">((resolve) =>
        setTimeout(() => resolve("timeout"), 5000).unref(),
      );
      const outcome = await Promise.race([
        once(redis, "ready").then(() => "ready" as const),
        timeout,
      ]);
      if (outcome === "timeout")
        logger.warn("rate-limit store not ready; counting in process until it is");
    },
    async consume(kind, key) {
      try {
        return headers(limits[kind], await limiters[kind].consume(key));
      } catch (rejection) {
        if (!(rejection instanceof RateLimiterRes)) throw rejection;
        throw new RateLimitedError(rejection.msBeforeNext / 1000, headers(limits[kind], rejection));
      }
    },
    async checkLogin(key) {
      const used = await logins.get(key);
      if (used !== null && used.consumedPoints >= LOGIN_FAILURES)
        throw new RateLimitedError(used.msBeforeNext / 1000);
    },
    async failLogin(key) {
      // Past the limit rate-limiter-flexible rejects with the counter: counted all the same.
      await logins.consume(key).catch((rejection: unknown) => {
        if (!(rejection instanceof RateLimiterRes)) throw rejection;
      });
    },
    async close() {
      if (redis !== undefined) await redis.quit().catch(() => undefined);
    },
  };
}
