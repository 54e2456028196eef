import http from "node:http";
import type { AddressInfo } from "node:net";
import { Writable } from "node:stream";
import pino from "pino";
import { request } from "undici";
import { JsonableError } from "@repo/envelope";
import { type Exchange, applyHeaders, observe, sendError, sendJson } from "../src/http/exchange";
import { createMetrics } from "../src/lib/metrics";

const exchange = (headers: string[] = []): Exchange => ({
  id: "r1",
  route: "/x",
  gone: false,
  onGone: undefined,
  headers,
});

/** The raw header lines (name, value...) and body of one GET to a server running `handler`. */
async function rawAnswer(handler: http.RequestListener) {
  const server = http.createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  try {
    const { port } = server.address() as AddressInfo;
    return await new Promise<{ status: number | undefined; raw: string[]; body: string }>(
      (resolve, reject) => {
        http
          .get(`http://127.0.0.1:${String(port)}/`, (response) => {
            let body = "";
            response.setEncoding("utf8");
            response.on("data", (chunk: string) => (body += chunk));
            response.on("end", () => {
              resolve({ status: response.statusCode, raw: response.rawHeaders, body });
            });
          })
          .on("error", reject);
      },
    );
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}

/** A logger at info level whose lines are kept in `lines`. */
function capturingLogger() {
  const lines: string[] = [];
  const logger = pino(
    { level: "info" },
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(chunk.toString());
        done();
      },
    }),
  );
  return { lines, logger };
}

describe("sendJson", () => {
  it("writes the exchange's headers in order, then the body's type and length", async () => {
    const reply = await rawAnswer((_req, res) => {
      sendJson(res, exchange(["X-Request-Id", "r1", "X-Two", "2"]), 201, { a: "é" });
    });
    expect(reply.status).toBe(201);
    expect(reply.body).toBe('{"a":"é"}');
    expect(reply.raw.slice(0, 8)).toEqual([
      "X-Request-Id",
      "r1",
      "X-Two",
      "2",
      "Content-Type",
      "application/json; charset=utf-8",
      "Content-Length",
      "10",
    ]);
  });

  it("keeps headers already set on the response first (Express's path)", async () => {
    const reply = await rawAnswer((_req, res) => {
      const first = exchange(["X-Request-Id", "r1"]);
      applyHeaders(res, first);
      res.setHeader("Vary", "Origin");
      first.headers.push("X-RateLimit-Limit", "100");
      sendJson(res, first, 200, {});
    });
    expect(reply.raw.slice(0, 10)).toEqual([
      "X-Request-Id",
      "r1",
      "Vary",
      "Origin",
      "X-RateLimit-Limit",
      "100",
      "Content-Type",
      "application/json; charset=utf-8",
      "Content-Length",
      "2",
    ]);
  });
});

describe("observe", () => {
  it("writes one access-log line per answer, with its fields, at error level for a 5xx", async () => {
    const { lines, logger } = capturingLogger();
    const metrics = createMetrics(() => ({ total: 0, idle: 0, waiting: 0 }));
    const statuses = [200, 503];
    for (const status of statuses) {
      const reply = await rawAnswer((req, res) => {
        const exchange = observe(req, res, "/api/v1/x", { metrics, logger });
        sendJson(res, exchange, status, {});
      });
      expect(reply.status).toBe(status);
    }
    await new Promise((resolve) => setImmediate(resolve));
    const logged = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(logged).toHaveLength(2);
    for (const [i, line] of logged.entries()) {
      const { time, pid, hostname, responseTime, req, ...rest } = line;
      expect([typeof time, typeof pid, typeof hostname, typeof responseTime]).toEqual([
        "number",
        "number",
        "string",
        "number",
      ]);
      expect(req).toEqual({
        id: expect.stringMatching(/^[0-9a-f-]{36}$/) as unknown,
        method: "GET",
        path: "/api/v1/x",
        remoteAddress: "127.0.0.1",
      });
      expect(rest).toEqual({
        level: i === 0 ? 30 : 50,
        res: { statusCode: statuses[i] },
        msg: "request completed",
      });
    }
    const counted = await metrics.registry.getSingleMetricAsString("chat_http_requests_total");
    expect(counted).toContain('status="503"} 1');
  });
});

describe("sendError", () => {
  const { lines, logger } = capturingLogger();

  async function answer(handler: http.RequestListener) {
    const server = http.createServer(handler);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = server.address() as AddressInfo;
      return await request(`http://127.0.0.1:${String(port)}/`).then(
        async (response) => ({ status: response.statusCode, body: await response.body.text() }),
        (error: unknown) => ({ failed: error instanceof Error }),
      );
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  }

  it("answers the error envelope when nothing was sent yet", async () => {
    const reply = await answer((_req, res) => {
      sendError(res, new JsonableError("Nope"), exchange(), logger);
    });
    expect(reply).toEqual({
      status: 400,
      body: '{"result":"error","msg":"Nope","code":"BAD_REQUEST"}',
    });
  });

  it("cuts the connection, and does not throw, when the answer had begun", async () => {
    lines.length = 0;
    const reply = await answer((_req, res) => {
      res.writeHead(200, { "content-length": "100" });
      res.write("{");
      sendError(res, new Error("late"), exchange(), logger);
    });
    expect(reply).toEqual({ failed: true });
    expect(lines.join("")).toContain("failed after the answer began");
  });
});
