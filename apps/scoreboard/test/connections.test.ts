import { setTimeout as sleep } from "node:timers/promises";
import { once } from "node:events";
import http from "node:http";
import http2 from "node:http2";
import net from "node:net";
import { SnapshotStore } from "../src/snapshot/store";
import { rows, scoreboardClient, snapshotOf, startServer, transportNamed } from "./helpers";

async function loadedStore(): Promise<SnapshotStore> {
  const store = new SnapshotStore();
  store.swap(await snapshotOf(rows(3)));
  return store;
}

/** Starts a Connect POST over h2c whose body is held back until `finish` is called. */
function heldCall(session: http2.ClientHttp2Session) {
  const stream = session.request({
    ":method": "POST",
    ":path": "/scoreboard.v1.ScoreboardService/GetByRank",
    "content-type": "application/json",
  });
  const chunks: Buffer[] = [];
  stream.on("data", (chunk: Buffer) => chunks.push(chunk));
  const response = new Promise<{ status: number; body: string }>((resolve, reject) => {
    let status = 0;
    stream.on("response", (headers) => (status = Number(headers[":status"])));
    stream.on("end", () => resolve({ status, body: Buffer.concat(chunks).toString() }));
    stream.on("error", reject);
  });
  stream.write("{");
  return { finish: () => stream.end('"rank":2}'), response };
}

describe("graceful shutdown", () => {
  it("lets an in-flight h2c call finish, refuses new connections, then closes", async () => {
    const running = await startServer(await loadedStore());
    const session = http2.connect(running.baseUrl);
    await once(session, "connect");
    const call = heldCall(session);
    await sleep(50);
    const goaway = once(session, "goaway");
    const stopped = running.shutdown(5_000);
    await goaway;
    await expect(
      new Promise((resolve, reject) => {
        const socket = net.connect(running.port, "127.0.0.1", () => resolve("connected"));
        socket.on("error", reject);
      }),
    ).rejects.toMatchObject({ code: "ECONNREFUSED" });
    call.finish();
    const { status, body } = await call.response;
    expect(status).toBe(200);
    expect(JSON.parse(body)).toMatchObject({ rank: 2, username: "user2" });
    await stopped;
    session.close();
  });

  it("lets an in-flight HTTP/1.1 call finish and closes its keep-alive connection", async () => {
    const running = await startServer(await loadedStore());
    const agent = new http.Agent({ keepAlive: true });
    const request = http.request(`${running.baseUrl}/scoreboard.v1.ScoreboardService/GetByRank`, {
      method: "POST",
      agent,
      headers: { "content-type": "application/json", "content-length": "10" },
    });
    const response = new Promise<http.IncomingMessage>((resolve) =>
      request.on("response", resolve),
    );
    request.write("{");
    await sleep(50);
    const stopped = running.shutdown(5_000);
    request.end('"rank":3}');
    const res = await response;
    let body = "";
    for await (const chunk of res) body += String(chunk);
    expect(res.statusCode).toBe(200);
    expect(res.headers.connection).toBe("close");
    expect(JSON.parse(body)).toMatchObject({ rank: 3 });
    await stopped;
    agent.destroy();
  });

  it("cuts calls that outlast the grace period", async () => {
    const running = await startServer(await loadedStore());
    const session = http2.connect(running.baseUrl);
    await once(session, "connect");
    const call = heldCall(session);
    call.response.catch(() => undefined);
    const started = Date.now();
    await running.shutdown(200);
    expect(Date.now() - started).toBeLessThan(2_000);
    await once(session, "close");
  });
});

describe("maximum connection age", () => {
  it("sends GOAWAY to an old h2c connection, and clients carry on over a new one", async () => {
    const running = await startServer(await loadedStore(), {
      maxConnectionAgeMs: 150,
      maxConnectionAgeGraceMs: 500,
    });
    try {
      const session = http2.connect(running.baseUrl);
      const started = Date.now();
      await once(session, "goaway");
      const age = Date.now() - started;
      expect(age).toBeGreaterThanOrEqual(120);
      expect(age).toBeLessThan(2_000);
      session.close();
      const client = scoreboardClient(transportNamed(running.baseUrl, "gRPC (h2c)"));
      // A call that meets a GOAWAY in flight is refused (REFUSED_STREAM: not
      // processed, safe to send again, as gRPC clients do by themselves).
      const rankOne = async (): Promise<string> => {
        for (let attempt = 1; ; attempt++) {
          try {
            return (await client.getByRank({ rank: 1 })).username;
          } catch (error) {
            if (attempt >= 3 || !String(error).includes("REFUSED_STREAM")) throw error;
          }
        }
      };
      for (let i = 0; i < 5; i++) {
        expect(await rankOne()).toBe("user1");
        await sleep(100);
      }
    } finally {
      await running.shutdown();
    }
  });
});

describe("the one port", () => {
  it("waits for the whole HTTP/2 preface before choosing a protocol", async () => {
    const running = await startServer(await loadedStore());
    try {
      const socket = net.connect(running.port, "127.0.0.1");
      await once(socket, "connect");
      socket.write("PRI * HTTP/2.0\r\n");
      // Still waiting for the rest of the preface: nothing is answered yet.
      const early = await Promise.race([
        once(socket, "data").then(() => "data"),
        new Promise((resolve) => setTimeout(() => resolve("quiet"), 200)),
      ]);
      expect(early).toBe("quiet");
      socket.write("\r\nSM\r\n\r\n");
      // The rest of the preface arrives: the HTTP/2 server answers with its SETTINGS frame.
      const [frame] = (await once(socket, "data")) as [Buffer];
      expect(frame[3]).toBe(0x04);
      socket.destroy();
    } finally {
      await running.shutdown();
    }
  });

  it("answers HTTP/1.1 garbage with 400 and stays up", async () => {
    const running = await startServer(await loadedStore());
    try {
      const socket = net.connect(running.port, "127.0.0.1");
      await once(socket, "connect");
      socket.write("HELLO THERE\r\n\r\n");
      const [reply] = (await once(socket, "data")) as [Buffer];
      expect(reply.toString()).toMatch(/^HTTP\/1\.1 400/);
      socket.destroy();
      const client = scoreboardClient(transportNamed(running.baseUrl, "Connect POST (HTTP/1.1)"));
      expect((await client.getByRank({ rank: 3 })).rank).toBe(3);
    } finally {
      await running.shutdown();
    }
  });
});
