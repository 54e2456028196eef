/**
 * HTTP/2 frames written by hand (RFC 9113), for attacks no well-behaved client
 * library sends: floods of control frames, endless CONTINUATION, streams reset
 * half-way. Header blocks use HPACK literals without indexing or Huffman coding
 * (RFC 7541 section 6.2.2), which every decoder must accept.
 */
import { once } from "node:events";
import net from "node:net";

export const FRAME = {
  DATA: 0x0,
  HEADERS: 0x1,
  PRIORITY: 0x2,
  RST_STREAM: 0x3,
  SETTINGS: 0x4,
  PING: 0x6,
  GOAWAY: 0x7,
  WINDOW_UPDATE: 0x8,
  CONTINUATION: 0x9,
} as const;

export const FLAG = { END_STREAM: 0x1, ACK: 0x1, END_HEADERS: 0x4 } as const;

const PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");

/** One frame: 9-byte header and payload. */
export function frame(
  type: number,
  flags: number,
  streamId: number,
  payload: Buffer = Buffer.alloc(0),
): Buffer {
  const header = Buffer.alloc(9);
  header.writeUIntBE(payload.length, 0, 3);
  header[3] = type;
  header[4] = flags;
  header.writeUInt32BE(streamId & 0x7fffffff, 5);
  return Buffer.concat([header, payload]);
}

/** An HPACK header block of literal fields (names and values under 127 bytes). */
export function headerBlock(fields: readonly (readonly [string, string])[]): Buffer {
  const parts: Buffer[] = [];
  for (const [name, value] of fields) {
    const n = Buffer.from(name);
    const v = Buffer.from(value);
    if (n.length > 126 || v.length > 126) throw new Error("header field too long for this helper");
    parts.push(Buffer.from([0x00, n.length]), n, Buffer.from([v.length]), v);
  }
  return Buffer.concat(parts);
}

/** The request headers of a unary gRPC call to the scoreboard. */
export function grpcRequestHeaders(method: string): Buffer {
  return headerBlock([
    [":method", "POST"],
    [":scheme", "http"],
    [":path", `/scoreboard.v1.ScoreboardService/${method}`],
    [":authority", "127.0.0.1"],
    ["content-type", "application/grpc"],
    ["te", "trailers"],
  ]);
}

/** A raw h2c connection: preface and empty SETTINGS sent; what the server says is counted. */
export interface RawH2 {
  socket: net.Socket;
  /** Frames received, by type. */
  received: Map<number, number>;
  /** Resolves when the server closes the connection (or it fails). */
  closed: Promise<void>;
  write(bytes: Buffer): boolean;
}

/** Opens a raw h2c connection to `port` on loopback. */
export async function rawH2Connection(port: number): Promise<RawH2> {
  const socket = net.connect(port, "127.0.0.1");
  socket.on("error", () => undefined); // a reset by the server is an expected outcome
  await once(socket, "connect");
  const received = new Map<number, number>();
  let buffered = Buffer.alloc(0);
  socket.on("data", (chunk: Buffer) => {
    buffered = Buffer.concat([buffered, chunk]);
    while (buffered.length >= 9) {
      const length = buffered.readUIntBE(0, 3);
      if (buffered.length < 9 + length) break;
      const type = buffered[3] ?? -1;
      received.set(type, (received.get(type) ?? 0) + 1);
      // Acknowledge the server's SETTINGS, as a client must, so that they take effect.
      if (type === FRAME.SETTINGS && ((buffered[4] ?? 0) & FLAG.ACK) === 0 && socket.writable)
        socket.write(frame(FRAME.SETTINGS, FLAG.ACK, 0));
      buffered = buffered.subarray(9 + length);
    }
  });
  const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
  socket.write(Buffer.concat([PREFACE, frame(FRAME.SETTINGS, 0, 0)]));
  return { socket, received, closed, write: (bytes) => socket.write(bytes) };
}
