/**
 * What the scoreboard's stress tests share: the service as a real process (the
 * built `dist/index.js`, as deployed), its log lines and metrics, and an
 * upstream board site whose behaviour a test switches.
 */
import { once } from "node:events";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { NODE_FLAGS } from "../src/node-flags";
import { type StartedService, freePort, startService } from "@repo/bench-kit";

/** A running scoreboard process. */
export interface ScoreboardProcess extends StartedService {
  port: number;
  metricsPort: number;
  baseUrl: string;
  /** The metrics text. */
  metrics(): Promise<string>;
}

/** Starts `node [nodeArgs] dist/index.js` with `env`; resolves once it listens. */
export async function startScoreboard(
  env: Record<string, string>,
  nodeArgs: string[] = [],
): Promise<ScoreboardProcess> {
  const [port, metricsPort] = [await freePort(), await freePort()];
  const started = await startService({
    script: join(__dirname, "../dist/index.js"),
    port,
    nodeArgs: [...NODE_FLAGS, ...nodeArgs],
    env: {
      SCOREBOARD_HOST: "127.0.0.1",
      SCOREBOARD_PORT: String(port),
      SCOREBOARD_METRICS_PORT: String(metricsPort),
      SCOREBOARD_LOG_LEVEL: "info",
      ...env,
    },
  });
  return {
    ...started,
    port,
    metricsPort,
    baseUrl: `http://127.0.0.1:${port}`,
    metrics: async () => (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text(),
  };
}

/** The value of one sample line of a metrics text (0 when absent). */
export function sample(metrics: string, name: string): number {
  const line = metrics.split("\n").find((l) => l.startsWith(`${name} `));
  return line === undefined ? 0 : Number(line.slice(name.length + 1));
}

type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => void;

/** An upstream board site on a fixed loopback port, which can be taken down and brought back. */
export async function upstream(initial: Handler) {
  let handler = initial;
  const sockets = new Set<import("node:net").Socket>();
  const server = http.createServer((req, res) => handler(req, res));
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/board.csv`,
    set(next: Handler) {
      handler = next;
    },
    /** Closes the port: fetches are refused. */
    async down() {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
    async up() {
      server.listen(port, "127.0.0.1");
      await once(server, "listening");
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      if (server.listening) await new Promise((resolve) => server.close(resolve));
    },
  };
}
