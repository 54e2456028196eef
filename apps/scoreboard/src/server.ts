import { setTimeout as sleep } from "node:timers/promises";
import http from "node:http";
import http2 from "node:http2";
import net from "node:net";
import { ScoreboardService } from "@repo/proto-gen/scoreboard/v1";
import { createCallRecorder } from "./calls";
import { createConnectGetLane } from "./connect-get-lane";
import { SERVER_LIMITS } from "./limits";
import { type RouteDeps, observe, routes } from "./connect";
import { corsHandler } from "./cors";
import { READ_MAX_BYTES, createGrpcFastLane } from "./grpc-fast-lane";
import { cacheHeaders, etagMatches } from "./http-cache";
import { type NodeRequest, type NodeResponse, createRpcHandler } from "./rpc-handler";

/** Settings of the listener. */
export interface ServerOptions {
  /** Close HTTP/2 connections after about this long (+/-10 % jitter), so clients re-balance. */
  maxConnectionAgeMs?: number | undefined;
  /** Time a connection past its age gets to finish its calls before it is cut. */
  maxConnectionAgeGraceMs?: number | undefined;
  /** Origins browser clients may call from (SCOREBOARD_CORS_ORIGINS); none when empty. */
  corsOrigins?: readonly string[] | undefined;
  /**
   * Serve unary gRPC and Connect GET over HTTP/2 on the fast lanes (default);
   * false sends every call through connect-es.
   */
  grpcFastLane?: boolean | undefined;
  /** Streams one HTTP/2 connection may have open at once (SETTINGS_MAX_CONCURRENT_STREAMS). */
  maxConcurrentStreams?: number | undefined;
  /** A stream with no traffic either way for this long is reset (CANCEL). */
  streamIdleTimeoutMs?: number | undefined;
  /** Connections held at once; past it, new ones are closed on arrival. */
  maxConnections?: number | undefined;
  /** Time an HTTP/1.1 request head may take to arrive (408 and close past it). */
  headersTimeoutMs?: number | undefined;
  /** Time a whole HTTP/1.1 request may take to arrive (408 and close past it). */
  requestTimeoutMs?: number | undefined;
}

/** The scoreboard's one port, and how to drain it. */
export interface ScoreboardServer {
  /** The listener: gRPC, gRPC-Web and Connect over h2c, Connect and gRPC-Web over HTTP/1.1. */
  readonly server: net.Server;
  /** Stops accepting, lets in-flight calls finish within `graceMs`, then cuts what is left. */
  readonly shutdown: (graceMs: number) => Promise<void>;
}

const PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");
/** A connection that sends nothing for this long before its first bytes is dropped. */
const FIRST_BYTES_TIMEOUT_MS = 10_000;
/** Connect GET paths of the scoreboard's own methods, for the 304 shortcut. */
const GET_METHODS = new Map(
  ScoreboardService.methods.map((method) => [
    `/${ScoreboardService.typeName}/${method.name}`,
    method,
  ]),
);

/** Builds the listener (not yet listening) for `deps`. */
export function createScoreboardServer(
  deps: RouteDeps,
  options: ServerOptions = {},
): ScoreboardServer {
  const limits = { ...SERVER_LIMITS, ...definedOnly(options) };
  const record = createCallRecorder(deps);
  const connect = createRpcHandler(routes(deps), {
    interceptors: [observe(record)],
    readMaxBytes: READ_MAX_BYTES,
    logger: deps.logger,
  });
  const lanes =
    options.grpcFastLane === false
      ? []
      : [createGrpcFastLane(deps, record), createConnectGetLane(deps, record)];
  let draining = false;
  /** HTTP/1.1 responses under way: told to close their connection when the server drains. */
  const openResponses = new Set<http.ServerResponse>();

  const crossOrigin = corsHandler(options.corsOrigins ?? []);

  const handle = (req: NodeRequest, res: NodeResponse): void => {
    if (crossOrigin === undefined) serve(req, res);
    else
      crossOrigin(req, res, () => {
        serve(req, res);
      });
  };

  const serve = (req: NodeRequest, res: NodeResponse): void => {
    if (res instanceof http.ServerResponse) {
      if (draining) res.shouldKeepAlive = false;
      else {
        openResponses.add(res);
        res.once("close", () => openResponses.delete(res));
      }
    }
    // A Connect GET whose cached copy is still current: answer 304 without decoding anything.
    // Only for the service's own methods: any other path is unknown whatever its headers say.
    const snapshot = deps.store.current();
    const ifNoneMatch = req.headers["if-none-match"];
    const method =
      req.method === "GET" ? GET_METHODS.get(req.url?.split("?", 1)[0] ?? "") : undefined;
    if (
      method !== undefined &&
      snapshot !== undefined &&
      typeof ifNoneMatch === "string" &&
      etagMatches(ifNoneMatch, snapshot.etag)
    ) {
      record(method).notModified();
      res.statusCode = 304;
      for (const [name, value] of Object.entries(cacheHeaders(snapshot, deps.store))) {
        res.setHeader(name, value);
      }
      res.end();
      return;
    }
    connect(req, res);
  };

  const h1 = http.createServer(
    {
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      // How often those two are checked: at most a second past either.
      connectionsCheckingInterval: Math.min(1000, limits.headersTimeoutMs),
    },
    handle,
  );
  // http.Server starts checking those timeouts when it emits "listening"; this
  // one never listens (connections are handed to it below), so it is told here.
  h1.emit("listening");
  // Streams reach the fast lane first, before Node wraps them in request and
  // response objects; the rest go through `compat`, a server that never
  // listens and only makes those objects for the handler.
  const h2 = http2.createServer({
    settings: { maxConcurrentStreams: limits.maxConcurrentStreams },
  });
  const compat = http2.createServer({}, handle);
  // One call's failure (a reset, a write to a closed window) ends that call only.
  // Both listeners are made once here, not per stream.
  const onStreamError = (error: Error): void => {
    deps.logger.debug({ err: error }, "a stream failed");
  };
  // A fast lane's call is usually over within the loop turn its request
  // arrives in: its idle timer is set only if it is not, by one check for all
  // of that turn's calls (a timer per call, set and refreshed on every frame,
  // was ~5% of a GetByRank's CPU).
  let unsettled: http2.ServerHttp2Stream[] = [];
  const timeUnsettled = (): void => {
    const streams = unsettled;
    unsettled = [];
    for (const stream of streams)
      if (!stream.destroyed && !stream.closed && !(stream.readableEnded && stream.writableFinished))
        stream.setTimeout(limits.streamIdleTimeoutMs, cancelIdleStream);
  };
  h2.on("stream", (stream, headers, flags, rawHeaders) => {
    stream.on("error", onStreamError);
    if (lanes.some((lane) => lane(stream, headers))) {
      if (unsettled.push(stream) === 1) setImmediate(timeUnsettled);
      return;
    }
    stream.setTimeout(limits.streamIdleTimeoutMs, cancelIdleStream);
    compat.emit("stream", stream, headers, flags, rawHeaders);
  });
  const sessions = new Set<http2.Http2Session>();
  const sockets = new Set<net.Socket>();

  h2.on("session", (session) => {
    session.on("error", (error) => deps.logger.debug({ err: error }, "a connection failed"));
    sessions.add(session);
    session.once("close", () => sessions.delete(session));
    const { maxConnectionAgeMs: age, maxConnectionAgeGraceMs: grace = 30_000 } = options;
    if (age !== undefined) {
      const timer = setTimeout(
        () => closeSession(session, grace),
        age * (0.9 + Math.random() * 0.2),
      );
      timer.unref();
      session.once("close", () => clearTimeout(timer));
    }
  });

  const server = net.createServer((socket) => {
    // A reset before the protocol is known (or after) ends that connection only.
    socket.on("error", (error) => deps.logger.debug({ err: error }, "a connection failed"));
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
    socket.setTimeout(FIRST_BYTES_TIMEOUT_MS, () => socket.destroy());
    let head = Buffer.alloc(0);
    const onData = (chunk: Buffer): void => {
      head = Buffer.concat([head, chunk]);
      const n = Math.min(head.length, PREFACE.length);
      const looksLikeH2 = head.subarray(0, n).equals(PREFACE.subarray(0, n));
      if (looksLikeH2 && head.length < PREFACE.length) return; // wait for the whole preface
      socket.off("data", onData);
      socket.setTimeout(0);
      socket.pause();
      socket.unshift(head);
      if (looksLikeH2) {
        // http2 reads the unshifted bytes, then the socket's handle directly.
        h2.emit("connection", socket);
      } else {
        h1.emit("connection", socket);
        socket.resume();
      }
    };
    socket.on("data", onData);
  });
  server.maxConnections = limits.maxConnections;

  return {
    server,
    shutdown: async (graceMs) => {
      draining = true;
      h1.close();
      deps.health.drain();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const session of sessions) closeSession(session, graceMs);
      for (const res of openResponses) if (!res.headersSent) res.shouldKeepAlive = false;
      h1.closeIdleConnections();
      const deadline = Date.now() + graceMs;
      while (sockets.size > 0 && Date.now() < deadline) {
        h1.closeIdleConnections();
        await sleep(25);
      }
      for (const socket of sockets) socket.destroy();
      await closed;
    },
  };
}

/** GOAWAY now, so the client opens a new connection; cut the session if calls outlast `graceMs`. */
function closeSession(session: http2.Http2Session, graceMs: number): void {
  if (session.closed || session.destroyed) return;
  session.close();
  const cut = setTimeout(() => session.destroy(), graceMs);
  cut.unref();
  session.once("close", () => clearTimeout(cut));
}

/** `options` without its undefined entries, so that they do not hide the defaults. */
function definedOnly<T extends object>(options: T): Partial<T> {
  return Object.fromEntries(
    Object.entries(options).filter(([, value]) => value !== undefined),
  ) as Partial<T>;
}

/** A stream with no traffic for the idle time is reset (CANCEL); `this` is the stream. */
function cancelIdleStream(this: http2.Http2Stream): void {
  this.close(http2.constants.NGHTTP2_CANCEL);
}
