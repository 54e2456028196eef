import { connect } from "node:net";
import { type Person, type TestServer, startTestServer } from "./support/server";
import { testApi } from "./support/test-api";

let server: TestServer;
let hamlet: Person;

beforeAll(async () => {
  server = await startTestServer({ api: testApi });
  hamlet = await server.person("hamlet");
});

afterAll(() => server.close());

describe("unknown paths and methods", () => {
  it("answers an unknown path under /api/v1 with the JSON 404", async () => {
    const reply = await server.call("GET", "/api/v1/no/such/thing");
    expect([reply.status, reply.body]).toEqual([
      404,
      { result: "error", msg: "Not found", code: "NOT_FOUND" },
    ]);
  });

  it.each(["abc", "-1", "1.5", "99999999999"])(
    "treats a non-numeric or out-of-range id (%s) as an unknown path",
    async (id) => {
      const reply = await server.call("GET", `/api/v1/test/items/${id}`, {
        auth: [hamlet.email, hamlet.apiKey],
      });
      expect([reply.status, reply.body.code]).toEqual([404, "NOT_FOUND"]);
    },
  );

  it("passes a numeric id to the handler", async () => {
    const reply = await server.call("GET", "/api/v1/test/items/42", {
      auth: [hamlet.email, hamlet.apiKey],
    });
    expect(reply.body).toEqual({ result: "success", msg: "", item_id: 42 });
  });

  it("answers a wrong method with 405, Allow and allowed_methods, before authentication", async () => {
    const reply = await server.call("PATCH", "/api/v1/test/items/1");
    expect(reply.status).toBe(405);
    expect(reply.headers.allow).toBe("GET, DELETE, HEAD");
    expect(reply.body).toEqual({
      result: "error",
      msg: "Method Not Allowed",
      allowed_methods: ["GET", "DELETE", "HEAD"],
    });
    expect(reply.headers["www-authenticate"]).toBeUndefined();
  });

  it("allows HEAD wherever GET is", async () => {
    const reply = await server.call("HEAD", "/api/v1/test/items/1", {
      auth: [hamlet.email, hamlet.apiKey],
    });
    expect(reply.status).toBe(200);
    expect(reply.text).toBe("");
  });

  it("answers paths outside /api/v1 with the JSON 404 too", async () => {
    expect((await server.call("GET", "/nothing-here")).body).toEqual({
      result: "error",
      msg: "Not found",
      code: "NOT_FOUND",
    });
  });
});

describe("failures", () => {
  it("turns an unhandled error into the plain 500, with no detail, and logs it", async () => {
    const reply = await server.call("POST", "/api/v1/test/boom");
    expect([reply.status, reply.text]).toEqual([
      500,
      '{"result":"error","msg":"Internal server error"}',
    ]);
    expect(server.logs.join("")).toContain("secret_table");
  });

  it("answers an oversize body with 413 in the envelope", async () => {
    const reply = await server.call("POST", "/api/v1/test/params", {
      auth: [hamlet.email, hamlet.apiKey],
      form: { name: "x".repeat(2 * 1024 * 1024) },
    });
    expect([reply.status, reply.body]).toEqual([
      413,
      { result: "error", msg: "Request body too large", code: "BAD_REQUEST" },
    ]);
  });

  it("answers a broken multipart body with 400 in the envelope", async () => {
    const reply = await server.call("POST", "/api/v1/test/params", {
      auth: [hamlet.email, hamlet.apiKey],
      headers: { "content-type": "multipart/form-data; boundary=xyz" },
      body: '--xyz\r\nContent-Disposition: form-data; name="name"\r\n\r\nunterminated',
    });
    expect(reply.status).toBe(400);
    expect(reply.body).toMatchObject({ result: "error", code: "BAD_REQUEST" });
  });

  it("answers malformed percent-encoding with 400 in the envelope", async () => {
    const reply = await server.call("POST", "/api/v1/test/params", {
      auth: [hamlet.email, hamlet.apiKey],
      headers: { "content-type": "application/x-www-form-urlencoded; charset=koi8-x" },
      body: "name=abc",
    });
    expect(reply.status).toBe(415);
    expect(reply.body).toMatchObject({ result: "error", code: "BAD_REQUEST" });
  });

  it("answers a URL over Node's header limit with 431 in the envelope", async () => {
    const reply = await server.call("GET", "/api/v1/server_settings", {
      query: { padding: "x".repeat(20_000) },
    });
    expect([reply.status, reply.body]).toEqual([
      431,
      { result: "error", msg: "Request header fields too large", code: "BAD_REQUEST" },
    ]);
  });

  it("answers a request Node cannot parse with 400 in the envelope", async () => {
    const socket = connect(server.port, "127.0.0.1");
    socket.end("GARBAGE / HTTP/1.1\r\nHost: chat.test\r\n\r\n");
    const chunks: Buffer[] = [];
    for await (const chunk of socket) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString("utf8");
    expect(text.split("\r\n")[0]).toBe("HTTP/1.1 400 Bad Request");
    expect(JSON.parse(text.slice(text.indexOf("\r\n\r\n") + 4))).toEqual({
      result: "error",
      msg: "Bad request",
      code: "BAD_REQUEST",
    });
  });
});
