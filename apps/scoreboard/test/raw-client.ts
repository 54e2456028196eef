import http from "node:http";
import http2 from "node:http2";

/** What came back for one raw request: status, headers, body and (HTTP/2) trailers. */
export interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  trailers: Record<string, string>;
  body: Buffer;
}

/** One request as bytes on the wire, so tests can send what no generated client would. */
export interface RawRequest {
  method: "GET" | "POST";
  path: string;
  headers: Record<string, string>;
  body?: Uint8Array | undefined;
}

function flatten(
  headers: http.IncomingHttpHeaders | http2.IncomingHttpHeaders,
): Record<string, string> {
  const flat: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (name.startsWith(":") || value === undefined) continue;
    flat[name] = Array.isArray(value) ? value.join(", ") : value;
  }
  return flat;
}

/** Sends `request` over one HTTP/2 (h2c) session, reused across calls. */
export function rawH2(session: http2.ClientHttp2Session, request: RawRequest): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const stream = session.request({
      ":method": request.method,
      ":path": request.path,
      ...request.headers,
    });
    let status = 0;
    let headers: Record<string, string> = {};
    let trailers: Record<string, string> = {};
    const chunks: Buffer[] = [];
    stream.on("response", (h) => {
      status = Number(h[":status"]);
      headers = flatten(h);
    });
    stream.on("trailers", (t: http2.IncomingHttpHeaders) => {
      trailers = flatten(t);
    });
    stream.on("data", (chunk: Buffer) => chunks.push(chunk));
    stream.on("end", () => resolve({ status, headers, trailers, body: Buffer.concat(chunks) }));
    stream.on("error", reject);
    stream.end(request.body === undefined ? undefined : Buffer.from(request.body));
  });
}

/** Sends `request` over HTTP/1.1 with a keep-alive `agent`. */
export function rawH1(agent: http.Agent, port: number, request: RawRequest): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: "127.0.0.1",
        port,
        agent,
        method: request.method,
        path: request.path,
        headers: request.headers,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: flatten(res.headers),
            trailers: flatten(res.trailers),
            body: Buffer.concat(chunks),
          }),
        );
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(request.body === undefined ? undefined : Buffer.from(request.body));
  });
}

/** A gRPC length-prefixed message: flag byte, 4-byte big-endian length, bytes. */
export function envelope(message: Uint8Array, flags = 0, length = message.length): Buffer {
  const head = Buffer.alloc(5);
  head.writeUInt8(flags, 0);
  head.writeUInt32BE(length, 1);
  return Buffer.concat([head, message]);
}

/** The frames of a gRPC or gRPC-Web body: [flags, payload] in order. */
export function frames(body: Buffer): [number, Buffer][] {
  const out: [number, Buffer][] = [];
  let at = 0;
  while (at + 5 <= body.length) {
    const length = body.readUInt32BE(at + 1);
    out.push([body.readUInt8(at), body.subarray(at + 5, at + 5 + length)]);
    at += 5 + length;
  }
  return out;
}
