import { randomBytes } from "node:crypto";
import { freshDatabase } from "./support/database";
import { type Reply, type TestServer, startTestServer } from "./support/server";
import { testApi } from "./support/test-api";

const REDIS_URL = process.env.CHAT_TEST_REDIS_URL ?? "redis://127.0.0.1:6379";

function expectLimited(reply: Reply, limit: number): void {
  expect(reply.status).toBe(429);
  expect(reply.body).toMatchObject({
    result: "error",
    msg: "API usage exceeded rate limit",
    code: "RATE_LIMIT_HIT",
  });
  const retryAfter = reply.body["retry-after"];
  expect(typeof retryAfter).toBe("number");
  expect(retryAfter).toBeGreaterThan(0);
  expect(retryAfter).toBeLessThanOrEqual(60);
  expect(Number(reply.headers["retry-after"])).toBe(Math.ceil(retryAfter as number));
  expect(reply.headers["x-ratelimit-limit"]).toBe(String(limit));
  expect(reply.headers["x-ratelimit-remaining"]).toBe("0");
}

function expectCounted(reply: Reply, limit: number, remaining: number): void {
  expect(reply.status).toBe(200);
  expect(reply.headers["x-ratelimit-limit"]).toBe(String(limit));
  expect(reply.headers["x-ratelimit-remaining"]).toBe(String(remaining));
  const reset = Number(reply.headers["x-ratelimit-reset"]);
  expect(reset).toBeGreaterThan(Date.now() / 1000);
  expect(reset).toBeLessThanOrEqual(Date.now() / 1000 + 61);
}

describe.each([
  ["in process", {}],
  ["in Redis", { CHAT_RATE_LIMIT_REDIS_URL: REDIS_URL }],
])("rate limiting %s", (_where, store) => {
  let server: TestServer;
  const env = () => ({
    ...store,
    CHAT_RATE_LIMIT_USER_PER_MINUTE: "3",
    CHAT_RATE_LIMIT_IP_PER_MINUTE: "2",
    CHAT_RATE_LIMIT_REDIS_PREFIX: `test_${randomBytes(6).toString("hex")}`,
  });

  beforeAll(async () => {
    server = await startTestServer({ api: testApi, env: env() });
  });

  afterAll(() => server.close());

  it("allows a user 3 requests a minute, then answers 429 with retry-after and the X-RateLimit headers", async () => {
    const hamlet = await server.person("hamlet");
    const call = () =>
      server.call("GET", "/api/v1/test/whoami", { auth: [hamlet.email, hamlet.apiKey] });
    expectCounted(await call(), 3, 2);
    expectCounted(await call(), 3, 1);
    expectCounted(await call(), 3, 0);
    expectLimited(await call(), 3);
  });

  it("counts each user separately", async () => {
    const iago = await server.person("iago");
    expectCounted(
      await server.call("GET", "/api/v1/test/whoami", { auth: [iago.email, iago.apiKey] }),
      3,
      2,
    );
  });

  it("limits unauthenticated calls by IP address", async () => {
    const call = () => server.call("GET", "/api/v1/test/realm");
    expectCounted(await call(), 2, 1);
    expectCounted(await call(), 2, 0);
    expectLimited(await call(), 2);
  });
});

describe("rate limits in Redis", () => {
  it("are shared by two replicas", async () => {
    const prefix = `test_${randomBytes(6).toString("hex")}`;
    const env = {
      CHAT_RATE_LIMIT_REDIS_URL: REDIS_URL,
      CHAT_RATE_LIMIT_USER_PER_MINUTE: "2",
      CHAT_RATE_LIMIT_REDIS_PREFIX: prefix,
    };
    const db = await freshDatabase("seeded");
    const a = await startTestServer({ api: testApi, env, db });
    // PGlite has one connection per process: the second server shares it and leaves closing to the first.
    const replicaDb = (await db.replica?.()) ?? { ...db, close: () => Promise.resolve() };
    const b = await startTestServer({ api: testApi, env, db: replicaDb });
    try {
      const hamlet = await a.person("hamlet");
      const auth = [hamlet.email, hamlet.apiKey] as const;
      expect((await a.call("GET", "/api/v1/test/whoami", { auth })).status).toBe(200);
      expect((await b.call("GET", "/api/v1/test/whoami", { auth })).status).toBe(200);
      expectLimited(await a.call("GET", "/api/v1/test/whoami", { auth }), 2);
      expectLimited(await b.call("GET", "/api/v1/test/whoami", { auth }), 2);
    } finally {
      await b.close();
      await a.close();
      await db.close();
    }
  });
});

describe("CHAT_RATE_LIMIT=off", () => {
  it("never limits and sends no X-RateLimit headers", async () => {
    const server = await startTestServer({
      api: testApi,
      env: { CHAT_RATE_LIMIT: "off", CHAT_RATE_LIMIT_IP_PER_MINUTE: "1" },
    });
    try {
      for (let i = 0; i < 3; i++) {
        const reply = await server.call("GET", "/api/v1/test/realm");
        expect(reply.status).toBe(200);
        expect(reply.headers["x-ratelimit-limit"]).toBeUndefined();
      }
    } finally {
      await server.close();
    }
  });
});

describe("failed authentications", () => {
  it("count against the IP address, so a flood of bad keys meets 429s", async () => {
    const server = await startTestServer({
      api: testApi,
      env: { CHAT_RATE_LIMIT_IP_PER_MINUTE: "2" },
    });
    try {
      const call = () =>
        server.call("GET", "/api/v1/test/whoami", { auth: ["hamlet@example.com", "x".repeat(32)] });
      const first = await call();
      expect([first.status, first.headers["x-ratelimit-limit"]]).toEqual([401, "2"]);
      expect((await call()).status).toBe(401);
      expectLimited(await call(), 2);
    } finally {
      await server.close();
    }
  });
});
