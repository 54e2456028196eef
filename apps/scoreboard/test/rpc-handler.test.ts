import http from "node:http";
import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import pino from "pino";
import { EntrySchema, ScoreboardService } from "@repo/proto-gen/scoreboard/v1";
import { createRpcHandler } from "../src/rpc-handler";
import { envelope, rawH1 } from "./raw-client";

/** Log lines the handler wrote, as parsed JSON. */
const lines: Record<string, unknown>[] = [];
const logger = pino(
  { level: "error" },
  { write: (line: string) => lines.push(JSON.parse(line) as Record<string, unknown>) },
);

/**
 * A service whose answer cannot be written: `upgrade` is a legal header for
 * the WHATWG Headers object, but HTTP/2 forbids connection-specific headers, so
 * Node throws while writing the response head.
 */
const handler = createRpcHandler(
  (router) =>
    router.service(ScoreboardService, {
      getByRank(_, context) {
        context.responseHeader.set("upgrade", "h3");
        return create(EntrySchema, { rank: 1, username: "u" });
      },
      getByUsername() {
        return create(EntrySchema, { rank: 2, username: "v" });
      },
    }),
  { logger },
);

let h2: http2.Http2Server;
let h1: http.Server;
const sessions = new Set<http2.ServerHttp2Session>();

beforeAll(async () => {
  h2 = http2.createServer(handler);
  h2.on("session", (session) => sessions.add(session));
  h1 = http.createServer(handler);
  await Promise.all([
    new Promise<void>((resolve) => h2.listen(0, "127.0.0.1", resolve)),
    new Promise<void>((resolve) => h1.listen(0, "127.0.0.1", resolve)),
  ]);
});

afterAll(async () => {
  for (const session of sessions) session.destroy();
  h1.closeAllConnections();
  await Promise.all([
    new Promise((resolve) => h2.close(resolve)),
    new Promise((resolve) => h1.close(resolve)),
  ]);
});

const port = (server: http2.Http2Server | http.Server) => (server.address() as AddressInfo).port;

describe("the RPC handler's fault boundary", () => {
  it("cuts an HTTP/2 call whose answer cannot be written, at once, and logs why", async () => {
    const transport = createGrpcTransport({ baseUrl: `http://127.0.0.1:${port(h2)}` });
    const client = createClient(ScoreboardService, transport);
    const failure = await client.getByRank({ rank: 1 }).then(
      () => undefined,
      (error: unknown) => ConnectError.from(error),
    );
    expect(failure?.code).toBe(Code.Internal);
    expect(lines.at(-1)).toMatchObject({
      msg: "a call failed while its answer was written",
      path: "/scoreboard.v1.ScoreboardService/GetByRank",
    });
    // The session survives: the next call on it is answered.
    expect(await client.getByUsername({ username: "v" })).toMatchObject({ rank: 2 });
  });

  it("answers a path it does not serve with 404", async () => {
    const agent = new http.Agent();
    const answer = await rawH1(agent, port(h1), {
      method: "POST",
      path: "/scoreboard.v1.ScoreboardService/Nope",
      headers: { "content-type": "application/grpc" },
      body: envelope(new Uint8Array()),
    });
    expect(answer.status).toBe(404);
    agent.destroy();
  });

  it("serves Connect over HTTP/1.1 through the same routes", async () => {
    const transport = createConnectTransport({
      baseUrl: `http://127.0.0.1:${port(h1)}`,
      httpVersion: "1.1",
    });
    const entry = await createClient(ScoreboardService, transport).getByUsername({ username: "v" });
    expect(entry.username).toBe("v");
  });
});
