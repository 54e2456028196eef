import { setTimeout as sleep } from "node:timers/promises";
import { request } from "undici";
import { type Person, type TestServer, startTestServer } from "./support/server";
import { testApi } from "./support/test-api";

let server: TestServer;
let hamlet: Person;

beforeAll(async () => {
  server = await startTestServer({ api: testApi });
  hamlet = await server.person("hamlet");
});

afterAll(() => server.close());

describe("health", () => {
  it("/healthz says the process is up", async () => {
    const reply = await server.call("GET", "/healthz");
    expect([reply.status, reply.body]).toEqual([200, { status: "ok" }]);
  });

  it("/readyz says the database answers", async () => {
    const reply = await server.call("GET", "/readyz");
    expect([reply.status, reply.body]).toEqual([200, { status: "ok" }]);
  });
});

describe("metrics", () => {
  it("counts requests by route template and status, and reports the pool", async () => {
    await server.call("GET", "/api/v1/test/items/7", { auth: [hamlet.email, hamlet.apiKey] });
    await server.call("GET", "/api/v1/test/items/8", { auth: [hamlet.email, hamlet.apiKey] });
    await server.call("GET", "/api/v1/nowhere");
    const address = server.running.metricsServer.address() as { port: number };
    const text = await (await request(`http://127.0.0.1:${address.port}/metrics`)).body.text();
    expect(text).toMatch(
      /^chat_http_requests_total\{method="GET",route="\/api\/v1\/test\/items\/\{item_id\}",status="200"\} 2$/m,
    );
    expect(text).toMatch(
      /^chat_http_requests_total\{method="GET",route="unmatched",status="404"\} 1$/m,
    );
    expect(text).toMatch(
      /^chat_http_request_duration_seconds_count\{method="GET",route="\/api\/v1\/test\/items\/\{item_id\}"\} 2$/m,
    );
    expect(text).toMatch(/^chat_db_pool_connections \d+$/m);
    expect(text).toMatch(/^chat_db_pool_waiting_requests 0$/m);
  });
});

describe("request logs", () => {
  it("carry a request id, echoed in X-Request-Id, and never the credentials or the body", async () => {
    const secret = "S3cretFieldValueThatMustNotAppear";
    const reply = await server.call("POST", "/api/v1/test/params", {
      auth: [hamlet.email, hamlet.apiKey],
      form: { name: "ok", password: secret },
      query: { api_key: hamlet.apiKey },
      headers: { "x-request-id": "trace-1234" },
    });
    expect(reply.headers["x-request-id"]).toBe("trace-1234");
    const log = server.logs.join("");
    expect(log).toContain('"id":"trace-1234"');
    expect(log).not.toContain(hamlet.apiKey);
    expect(log).not.toContain(secret);
    expect(log.toLowerCase()).not.toContain("authorization");
  });

  it("makes up a request id when the client sends none or a bad one", async () => {
    const reply = await server.call("GET", "/healthz", {
      headers: { "x-request-id": "bad id with spaces" },
    });
    expect(reply.headers["x-request-id"]).toMatch(
      /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
  });
});

describe("GET /api/v1/openapi.json", () => {
  it("is a valid OpenAPI 3.1 document describing every registered route", async () => {
    const reply = await server.call("GET", "/api/v1/openapi.json");
    expect(reply.status).toBe(200);
    const document = reply.body as {
      openapi: string;
      paths: Record<string, Record<string, { deprecated: boolean }>>;
    };
    // An ES module only; jest runs with --experimental-vm-modules for such imports.
    const { Validator } = await import("@seriousme/openapi-schema-validator");
    const result = await new Validator().validate(document);
    expect(result.errors).toBeUndefined();
    expect(result.valid).toBe(true);
    expect(document.openapi).toBe("3.1.0");
    const described = Object.entries(document.paths).flatMap(([path, ops]) =>
      Object.keys(ops).map((method) => `${method.toUpperCase()} ${path}`),
    );
    const registered = testApi(server.services).operations.map((op) => `${op.method} ${op.path}`);
    expect(described.sort()).toEqual(registered.sort());
    expect(document.paths["/test/humans"]?.get?.deprecated).toBe(true);
    expect(document.paths["/test/whoami"]?.get?.deprecated).toBe(false);
  });
});

describe("graceful shutdown", () => {
  it("finishes a request in flight, refuses new connections, then closes the database", async () => {
    const own = await startTestServer({ api: testApi });
    const person = await own.person("hamlet");
    const slow = own.call("POST", "/api/v1/test/slow", {
      auth: [person.email, person.apiKey],
      form: { ms: 300 },
    });
    await sleep(100);
    const stopping = own.running.stop(5000);
    await sleep(20);
    // Refused, or reset as it connects (the listening socket closing under it, on a busy machine).
    await expect(request(`${own.url}/healthz`)).rejects.toThrow(
      /ECONNREFUSED|ECONNRESET|other side closed|socket/i,
    );
    const reply = await slow;
    expect([reply.status, reply.body]).toEqual([200, { result: "success", msg: "", slept: 300 }]);
    await stopping;
    expect(await own.db.ping()).toBe(false);
    await own.close();
  });

  it("answers /readyz with 503 once the database is gone, while /healthz stays green", async () => {
    const own = await startTestServer({ api: testApi, seed: false });
    await own.db.close();
    expect((await own.call("GET", "/readyz")).status).toBe(503);
    expect((await own.call("GET", "/healthz")).status).toBe(200);
    await own.close();
  });
});
