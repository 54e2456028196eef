import http from "node:http";
import type { AddressInfo } from "node:net";
import { Writable } from "node:stream";
import pino from "pino";
import { request } from "undici";
import { JsonableError } from "@repo/envelope";
import { sendError } from "../src/dispatch";

describe("sendError", () => {
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
      sendError(res, new JsonableError("Nope"), undefined, logger);
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
      sendError(
        res,
        new Error("late"),
        { id: "r1", route: "/x", gone: false, onGone: undefined },
        logger,
      );
    });
    expect(reply).toEqual({ failed: true });
    expect(lines.join("")).toContain("failed after the answer began");
  });
});
