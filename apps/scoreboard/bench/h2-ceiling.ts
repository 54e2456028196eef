/**
 * Benchmark fixture, not product code: the ceiling of this runtime, a bare
 * node:http2 stream handler that reads the request and answers every call with
 * one fixed, pre-encoded gRPC reply (status 0 in the trailers). Usage:
 * h2-ceiling.ts PORT FILE_HOLDING_THE_REPLY_MESSAGE
 */
import { readFileSync } from "node:fs";
import http2 from "node:http2";

const [port, file] = process.argv.slice(2);
const message = readFileSync(file ?? "");
const frame = Buffer.alloc(5 + message.length);
frame.writeUInt32BE(message.length, 1);
message.copy(frame, 5);

const server = http2.createServer();
server.on("stream", (stream) => {
  stream.on("data", () => undefined);
  stream.on("end", () => {
    stream.respond(
      { ":status": 200, "content-type": "application/grpc" },
      { waitForTrailers: true },
    );
    stream.on("wantTrailers", () => stream.sendTrailers({ "grpc-status": "0" }));
    stream.end(frame);
  });
});
server.listen(Number(port), "127.0.0.1", () => process.stdout.write("listening\n"));
