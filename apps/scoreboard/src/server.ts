import http from "node:http";
import http2 from "node:http2";
import net from "node:net";
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
  /** Serve unary gRPC over HTTP/2 on the fast lane (default); false sends every call through connect-es. */
  grpcFastLane?: boolean | undefined;
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
const SCOREBOARD_PATH = "/scoreboard.v1.ScoreboardService/";

/** Builds the listener (not yet listening) for `deps`. */
export function createScoreboardServer(
  deps: RouteDeps,
  options: ServerOptions = {},
): ScoreboardServer {
  const connect = createRpcHandler(routes(deps), {
    interceptors: [observe(deps)],
    readMaxBytes: READ_MAX_BYTES,
    logger: deps.logger,
  });
  const grpcFastLane = options.grpcFastLane === false ? undefined : createGrpcFastLane(deps);
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
    const snapshot = deps.store.current();
    const ifNoneMatch = req.headers["if-none-match"];
    if (
      req.method === "GET" &&
      snapshot !== undefined &&
      typeof ifNoneMatch === "string" &&
      req.url?.startsWith(SCOREBOARD_PATH) === true &&
      etagMatches(ifNoneMatch, snapshot.etag)
    ) {
      const method = req.url.slice(SCOREBOARD_PATH.length).split("?")[0] ?? "";
      deps.metrics.requests.inc({ method, code: "NOT_MODIFIED" });
      res.statusCode = 304;
      for (const [name, value] of Object.entries(cacheHeaders(snapshot, deps.store))) {
        res.setHeader(name, value);
      }
      res.end();
      return;
    }
    connect(req, res);
  };

  const h1 = http.createServer(handle);
  // Streams reach the fast lane first, before Node wraps them in request and
  // response objects; the rest go through `compat`, a server that never
  // listens and only makes those objects for the handler.
  const h2 = http2.createServer({});
  const compat = http2.createServer({}, handle);
  h2.on("stream", (stream, headers, flags, rawHeaders) => {
    if (grpcFastLane?.(stream, headers) !== true)
      compat.emit("stream", stream, headers, flags, rawHeaders);
  });
  const sessions = new Set<http2.Http2Session>();
  const sockets = new Set<net.Socket>();

  h2.on("session", (session) => {
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

  return {
    server,
    shutdown: async (graceMs) => {
      draining = true;
      deps.health.drain();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const session of sessions) closeSession(session, graceMs);
      for (const res of openResponses) if (!res.headersSent) res.shouldKeepAlive = false;
      h1.closeIdleConnections();
      const deadline = Date.now() + graceMs;
      while (sockets.size > 0 && Date.now() < deadline) {
        h1.closeIdleConnections();
        await new Promise((resolve) => setTimeout(resolve, 25));
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
