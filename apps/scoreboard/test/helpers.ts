import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import pino from "pino";
import { createClient, type Client, type Transport } from "@connectrpc/connect";
import {
  createConnectTransport,
  createGrpcTransport,
  createGrpcWebTransport,
} from "@connectrpc/connect-node";
import { ScoreboardService } from "@repo/proto-gen/scoreboard/v1";
import { type CallRecorder, createCallRecorder } from "../src/calls";
import type { RouteDeps } from "../src/connect";
import { HealthRegistry, ServingStatus } from "../src/health";
import { createMetrics, type ScoreboardMetrics } from "../src/metrics";
import { createScoreboardServer, type ServerOptions } from "../src/server";
import { parseBoard } from "../src/snapshot/parse";
import { Snapshot } from "../src/snapshot/snapshot";
import { SnapshotStore } from "../src/snapshot/store";

/** A logger that keeps tests quiet. */
export const silent = pino({ level: "silent" });

/** A board row as the JSON source format writes it. */
export interface Row {
  rank?: number;
  username: string;
  profile_path: string;
  country: string;
  grade: string;
  score: number;
}

/** `n` ranked rows whose usernames start with `prefix`. */
export function rows(n: number, prefix = "user"): Row[] {
  return Array.from({ length: n }, (_, i) => ({
    rank: i + 1,
    username: `${prefix}${i + 1}`,
    profile_path: `/u/${prefix}${i + 1}`,
    country: i % 2 === 0 ? "DE" : "JP",
    grade: "A",
    score: 10_000 - i,
  }));
}

/** A snapshot of `board` (JSON rows), fetched at `fetchedAt`. */
export async function snapshotOf(board: unknown, fetchedAt = 1_700_000_000n): Promise<Snapshot> {
  const columns = parseBoard(Buffer.from(JSON.stringify(board)), {
    contentType: "application/json",
  });
  return Snapshot.build(columns, fetchedAt);
}

/** A running server on a loopback port, with what it answers from. */
export interface Running {
  port: number;
  baseUrl: string;
  store: SnapshotStore;
  health: HealthRegistry;
  metrics: ScoreboardMetrics;
  shutdown: (graceMs?: number) => Promise<void>;
}

/** Starts the real listener on 127.0.0.1 (port 0) over `store`. */
export async function startServer(
  store = new SnapshotStore(),
  options: ServerOptions = {},
): Promise<Running> {
  const metrics = createMetrics(store);
  const health = new HealthRegistry([ScoreboardService.typeName]);
  if (store.current() !== undefined) health.setAll(ServingStatus.SERVING);
  store.onSwap(() => health.setAll(ServingStatus.SERVING));
  const { server, shutdown } = createScoreboardServer(
    { store, health, metrics, logger: silent },
    options,
  );
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    port,
    baseUrl: `http://127.0.0.1:${port}`,
    store,
    health,
    metrics,
    shutdown: (graceMs = 1000) => shutdown(graceMs),
  };
}

/** Every protocol and HTTP version a client may use against the port. */
export function transports(baseUrl: string): Record<string, Transport> {
  return {
    "gRPC (h2c)": createGrpcTransport({ baseUrl }),
    "gRPC-Web (HTTP/1.1)": createGrpcWebTransport({ baseUrl, httpVersion: "1.1" }),
    "gRPC-Web (h2c)": createGrpcWebTransport({ baseUrl, httpVersion: "2" }),
    "Connect POST (HTTP/1.1)": createConnectTransport({ baseUrl, httpVersion: "1.1" }),
    "Connect POST (h2c)": createConnectTransport({ baseUrl, httpVersion: "2" }),
    "Connect GET (HTTP/1.1)": createConnectTransport({
      baseUrl,
      httpVersion: "1.1",
      useHttpGet: true,
    }),
    "Connect GET binary (h2c)": createConnectTransport({
      baseUrl,
      httpVersion: "2",
      useHttpGet: true,
      useBinaryFormat: true,
    }),
  };
}

/** The transport called `name` of {@link transports}. */
export function transportNamed(baseUrl: string, name: string): Transport {
  const transport = transports(baseUrl)[name];
  if (transport === undefined) throw new Error(`no transport ${name}`);
  return transport;
}

/** A scoreboard client over `transport`. */
export function scoreboardClient(transport: Transport): Client<typeof ScoreboardService> {
  return createClient(ScoreboardService, transport);
}

/** A server with the fast lanes and one without, over one store, with an h2c session to each. */
export interface LanePair {
  fast: Running;
  connectOnly: Running;
  fastSession: http2.ClientHttp2Session;
  connectSession: http2.ClientHttp2Session;
  close(): Promise<void>;
}

/** Starts a {@link LanePair} over `store`, for tests that compare the lanes with connect-es. */
export async function startLanePair(store: SnapshotStore): Promise<LanePair> {
  const fast = await startServer(store);
  const connectOnly = await startServer(store, { grpcFastLane: false });
  const fastSession = http2.connect(fast.baseUrl);
  const connectSession = http2.connect(connectOnly.baseUrl);
  return {
    fast,
    connectOnly,
    fastSession,
    connectSession,
    async close() {
      fastSession.close();
      connectSession.close();
      await Promise.all([fast.shutdown(), connectOnly.shutdown()]);
    },
  };
}

/** A fast lane: takes a stream and answers it, or returns false untouched. */
type Lane = (stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders) => boolean;

/**
 * Runs `makeLane` alone on an h2c server over `store` (what it leaves is
 * answered 404), hands `use` a session to it, and closes both afterwards.
 */
export async function withLaneAlone(
  store: SnapshotStore,
  makeLane: (deps: RouteDeps, record: CallRecorder) => Lane,
  use: (session: http2.ClientHttp2Session) => Promise<void>,
): Promise<void> {
  const deps = {
    store,
    health: new HealthRegistry([]),
    metrics: createMetrics(store),
    logger: silent,
  };
  const lane = makeLane(deps, createCallRecorder(deps));
  const server = http2.createServer();
  server.on("stream", (stream, headers) => {
    if (!lane(stream, headers)) stream.respond({ ":status": 404 }, { endStream: true });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const session = http2.connect(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  try {
    await use(session);
  } finally {
    session.close();
    await new Promise((resolve) => server.close(resolve));
  }
}
