import { type TestServer, startTestServer } from "./support/server";

const APP = "https://app.example.com";

describe("CORS with an allow-list (CHAT_CORS_ORIGINS)", () => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer({
      env: { CHAT_CORS_ORIGINS: `${APP}, https://other.example.com` },
    });
  });

  afterAll(() => server.close());

  it("answers a preflight from an allowed origin, Authorization allowed, with credentials", async () => {
    const reply = await server.call("OPTIONS", "/api/v1/users/me", {
      headers: {
        origin: APP,
        "access-control-request-method": "GET",
        "access-control-request-headers": "authorization",
      },
    });
    expect(reply.status).toBe(204);
    expect(reply.headers["access-control-allow-origin"]).toBe(APP);
    expect(reply.headers["access-control-allow-credentials"]).toBe("true");
    expect(String(reply.headers["access-control-allow-headers"])).toContain("Authorization");
    expect(String(reply.headers["access-control-allow-methods"])).toContain("PATCH");
    expect(reply.headers["access-control-max-age"]).toBe("7200");
    expect(String(reply.headers.vary)).toContain("Origin");
  });

  it("lets an allowed origin read an authenticated answer and the exposed headers", async () => {
    const hamlet = await server.person("hamlet");
    const reply = await server.call("GET", "/api/v1/users/me", {
      auth: [hamlet.email, hamlet.apiKey],
      headers: { origin: APP },
    });
    expect(reply.status).toBe(200);
    expect(reply.headers["access-control-allow-origin"]).toBe(APP);
    expect(String(reply.headers["access-control-expose-headers"])).toContain(
      "X-RateLimit-Remaining",
    );
  });

  it("gives a refused origin no CORS headers, and its preflight no permission", async () => {
    const preflight = await server.call("OPTIONS", "/api/v1/users/me", {
      headers: { origin: "https://evil.example.com", "access-control-request-method": "GET" },
    });
    expect(preflight.status).toBe(405);
    expect(preflight.headers["access-control-allow-origin"]).toBeUndefined();
    const simple = await server.call("GET", "/api/v1/server_settings", {
      headers: { origin: "https://evil.example.com" },
    });
    expect(simple.status).toBe(200);
    expect(simple.headers["access-control-allow-origin"]).toBeUndefined();
  });
});

describe("CORS with a wildcard", () => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer({ env: { CHAT_CORS_ORIGINS: "*" } });
  });

  afterAll(() => server.close());

  it("allows any origin, never with credentials", async () => {
    const reply = await server.call("OPTIONS", "/api/v1/server_settings", {
      headers: { origin: "https://anywhere.example", "access-control-request-method": "GET" },
    });
    expect(reply.status).toBe(204);
    expect(reply.headers["access-control-allow-origin"]).toBe("*");
    expect(reply.headers["access-control-allow-credentials"]).toBeUndefined();
  });
});

describe("CORS by default (empty list)", () => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer();
  });

  afterAll(() => server.close());

  it("allows no cross-origin access", async () => {
    const reply = await server.call("GET", "/api/v1/server_settings", {
      headers: { origin: APP },
    });
    expect(reply.headers["access-control-allow-origin"]).toBeUndefined();
    const preflight = await server.call("OPTIONS", "/api/v1/server_settings", {
      headers: { origin: APP, "access-control-request-method": "GET" },
    });
    expect(preflight.headers["access-control-allow-origin"]).toBeUndefined();
  });
});
