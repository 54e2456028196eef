/**
 * The ceiling of long-polling on this runtime (a benchmark fixture, not
 * product code): a bare `node:http` server that holds `GET /api/v1/events`
 * polls and answers every waiting one from memory, with the same bytes as
 * chat-api's message events (BENCH_EVENT, a message event chat-api sent in
 * the same run), when `POST /api/v1/messages` arrives; a `dont_block` poll at
 * once. No authentication, no database. `POST /api/v1/register` answers a
 * queue id.
 *
 * BENCH_HEADERS (a JSON array of name and value pairs: a chat-api poll
 * answer's headers, as {@link answerHeaders} read them in the same run) makes
 * a poll's answer the same bytes as chat-api's, headers and all (with its
 * length, not chunked); without it, the answer has one header, chunked.
 */
import http from "node:http";

const PORT = Number(process.env.PORT ?? 0);
const TEMPLATE = JSON.parse(process.env.BENCH_EVENT ?? "{}") as {
  message: Record<string, unknown>;
  [key: string]: unknown;
};

/** Every event so far, serialized once (all listeners receive all of them). */
const events: { id: number; json: string }[] = [];
const waiting: { after: number; res: http.ServerResponse; queue: string }[] = [];
/** The answer's headers, flat (name, value, ...), Content-Length added per answer; none: one header. */
const HEADERS = (JSON.parse(process.env.BENCH_HEADERS ?? "[]") as [string, string][]).flat();
let queues = 0;
let messageId = 0;

function answer(res: http.ServerResponse, after: number, queue: string): void {
  const parts = events.filter((e) => e.id > after).map((e) => e.json);
  const text = `{"result":"success","msg":"","events":[${parts.join(",")}],"queue_id":"${queue}"}`;
  if (HEADERS.length === 0) res.writeHead(200, { "content-type": "application/json" });
  else res.writeHead(200, [...HEADERS, "Content-Length", String(Buffer.byteLength(text))]);
  res.end(text);
}

const server = http.createServer((req, res) => {
  const url = new URL(req.url ?? "/", "http://localhost");
  if (url.pathname === "/api/v1/register") {
    req.resume();
    queues += 1;
    res.writeHead(200, { "content-type": "application/json" });
    res.end(`{"result":"success","msg":"","queue_id":"q${String(queues)}","last_event_id":-1}`);
    return;
  }
  if (url.pathname === "/api/v1/events") {
    const after = Number(url.searchParams.get("last_event_id") ?? -1);
    const queue = url.searchParams.get("queue_id") ?? "";
    if ((events.at(-1)?.id ?? -1) > after || url.searchParams.get("dont_block") === "true")
      answer(res, after, queue);
    else waiting.push({ after, res, queue });
    return;
  }
  if (url.pathname === "/api/v1/messages") {
    req.resume();
    req.on("end", () => {
      messageId += 1;
      const id = events.length;
      events.push({
        id,
        json: JSON.stringify({ ...TEMPLATE, id, message: { ...TEMPLATE.message, id: messageId } }),
      });
      for (const poll of waiting.splice(0)) answer(poll.res, poll.after, poll.queue);
      res.writeHead(200, { "content-type": "application/json" });
      res.end(`{"result":"success","msg":"","id":${String(messageId)}}`);
    });
    return;
  }
  res.writeHead(404).end();
});
server.keepAliveTimeout = 120_000;
server.listen(PORT, "127.0.0.1");
process.on("SIGTERM", () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
});
