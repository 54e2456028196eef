/**
 * Multipart bodies as an attacker writes them: field names that look like
 * array indexes, more fields than allowed, bodies larger than the limit with or
 * without a Content-Length, files, an empty body. Each is refused (or read
 * flat) in the envelope, quickly, while the server keeps answering others.
 */
import http from "node:http";
import { type Person, type TestServer, startTestServer } from "./support/server";
import { testApi } from "./support/test-api";

let server: TestServer;
let hamlet: Person;

beforeAll(async () => {
  server = await startTestServer({ api: testApi });
  hamlet = await server.person("hamlet");
});

afterAll(() => server.close());

const BOUNDARY = "----chat-test-boundary";

/** A multipart body of `fields`, in order (names may repeat). */
function multipart(fields: readonly (readonly [string, string])[]): string {
  return [
    ...fields.flatMap(([name, value]) => [
      `--${BOUNDARY}`,
      `Content-Disposition: form-data; name="${name}"`,
      "",
      value,
    ]),
    `--${BOUNDARY}--`,
    "",
  ].join("\r\n");
}

const post = (body: string | Buffer, path = "/api/v1/test/params") =>
  server.call("POST", path, {
    auth: [hamlet.email, hamlet.apiKey],
    headers: { "content-type": `multipart/form-data; boundary=${BOUNDARY}` },
    body,
  });

/** Sends `chunks` as a chunked body (no Content-Length), one per tick; resolves with the answer. */
function postChunked(chunks: Iterable<Buffer>): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      `${server.url}/api/v1/test/params`,
      {
        method: "POST",
        headers: {
          "content-type": `multipart/form-data; boundary=${BOUNDARY}`,
          authorization: `Basic ${Buffer.from(`${hamlet.email}:${hamlet.apiKey}`).toString("base64")}`,
        },
      },
      (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (c: string) => (body += c));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on("error", (error: NodeJS.ErrnoException) => {
      // The server may close once it has answered; the answer is what counts.
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

describe("multipart bodies", () => {
  it("reads a bracketed field name as that flat name, at once, while others are answered", async () => {
    const started = Date.now();
    const health = fetch(`${server.url}/healthz`);
    const reply = await post(
      multipart([
        ["a[4294967294]", "x"],
        ["a[x]", "y"],
        ["name", "Ophel"],
      ]),
    );
    expect(reply.status).toBe(200);
    expect(reply.body.got).toEqual({ name: "Ophel", flag: false });
    expect((await health).status).toBe(200);
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it("takes the last value of a repeated field", async () => {
    const reply = await post(
      multipart([
        ["name", "first"],
        ["name", "last"],
      ]),
    );
    expect(reply.body.got).toMatchObject({ name: "last" });
  });

  it("refuses a body whose Content-Length is over the limit before reading it", async () => {
    // A head that announces 1,000 MiB, and 10 bytes of it: the answer comes at once.
    const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = http.request(`${server.url}/api/v1/test/params`, {
        method: "POST",
        headers: {
          "content-type": `multipart/form-data; boundary=${BOUNDARY}`,
          "content-length": String(1000 * 1024 * 1024),
          authorization: `Basic ${Buffer.from(`${hamlet.email}:${hamlet.apiKey}`).toString("base64")}`,
        },
      });
      req.on("response", (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (c: string) => (body += c));
        res.on("end", () => {
          resolve({ status: res.statusCode ?? 0, body });
          req.destroy();
        });
      });
      req.on("error", reject);
      req.write(multipart([["name", "x"]]).slice(0, 10));
    });
    expect([answer.status, JSON.parse(answer.body)]).toEqual([
      413,
      { result: "error", msg: "Request body too large", code: "BAD_REQUEST" },
    ]);
  });

  it("refuses a chunked body of many small fields once it passes the limit (1 MiB)", async () => {
    const field = Buffer.from(
      `--${BOUNDARY}\r\nContent-Disposition: form-data; name="f"\r\n\r\n${"z".repeat(64 * 1024)}\r\n`,
    );
    let sent = 0;
    function* fields(): Generator<Buffer> {
      // 1,000 fields of 64 KiB: 64 MiB if it were all read.
      for (let i = 0; i < 1000; i++) {
        sent += field.length;
        yield field;
      }
    }
    const reply = await postChunked(fields());
    expect(reply.status).toBe(413);
    expect(JSON.parse(reply.body)).toEqual({
      result: "error",
      msg: "Request body too large",
      code: "BAD_REQUEST",
    });
    expect(sent).toBeLessThan(16 * 1024 * 1024);
  });

  it("refuses one field larger than the limit", async () => {
    const reply = await postChunked([Buffer.from(multipart([["name", "y".repeat(1100 * 1024)]]))]);
    expect(reply.status).toBe(413);
  });

  it("refuses more than 1,000 fields", async () => {
    const many = Array.from({ length: 1001 }, (_, i) => [`f${String(i)}`, "1"] as const);
    const reply = await post(multipart(many));
    expect([reply.status, reply.body]).toEqual([
      400,
      { result: "error", msg: "Too many fields (limit: 1000)", code: "BAD_REQUEST" },
    ]);
  });

  it("refuses a file part", async () => {
    const body = [
      `--${BOUNDARY}`,
      'Content-Disposition: form-data; name="name"; filename="a.txt"',
      "Content-Type: text/plain",
      "",
      "hello",
      `--${BOUNDARY}--`,
      "",
    ].join("\r\n");
    const reply = await post(body);
    expect([reply.status, reply.body.msg]).toEqual([400, "Files are not accepted here"]);
  });

  it("reads an empty body (Content-Length 0, as zulip-js sends a POST without parameters) as no fields", async () => {
    const reply = await post("");
    expect([reply.status, reply.body.msg]).toEqual([400, "Missing 'name' argument"]);
  });

  it("refuses a multipart type without a boundary", async () => {
    const reply = await server.call("POST", "/api/v1/test/params", {
      auth: [hamlet.email, hamlet.apiKey],
      headers: { "content-type": "multipart/form-data" },
      body: "name=x",
    });
    expect([reply.status, reply.body.msg]).toEqual([400, "Malformed multipart body"]);
  });
});
