import http from "node:http";
import { once } from "node:events";
import type { Duplex } from "node:stream";
import type { Logger } from "pino";
import { createApp } from "./app";
import { deliverDueReminders } from "./actions/reminders";
import { deliverDueScheduledMessages } from "./actions/scheduled-messages";
import { deliverOutbox } from "./actions/outbox";
import { queueMissedMessageEmails } from "./actions/missed-messages";
import { realmUrl } from "./lib/realm-url";
import { deleteExpiredMessages } from "./actions/retention";
import { collectIdleQueues } from "./realtime/queue";
import { closeRenderPool } from "./lib/render-pool";
import { closePasswordChecks } from "./lib/password-strength";
import type { Api } from "./http/typed-endpoint";
import type { Services } from "./http/context";

/** A listening chat-api: the API port, the metrics port, and a graceful stop. */
export interface RunningServer {
  server: http.Server;
  metricsServer: http.Server;
  /** Stops accepting, lets in-flight requests finish (cut after `graceMs`), then closes everything. */
  stop(graceMs: number): Promise<void>;
}

/** How often each replica deletes event queues nobody polls any more. */
const QUEUE_COLLECTION_INTERVAL_MS = 60_000;

/** What Node's HTTP parser refuses before any handler runs, answered in the error envelope. */
const PARSER_ERRORS: Record<string, [number, string, string]> = {
  HPE_HEADER_OVERFLOW: [431, "Request Header Fields Too Large", "Request header fields too large"],
  ERR_HTTP_REQUEST_TIMEOUT: [408, "Request Timeout", "Request timeout"],
};

/**
 * Node answers a request it cannot parse (headers or URL over its 16 KiB
 * limit, malformed HTTP, a request that times out) with a bare status line;
 * clients of this API expect the envelope there too.
 */
function answerClientError(error: NodeJS.ErrnoException, socket: Duplex): void {
  if (error.code === "ECONNRESET" || !socket.writable) {
    socket.destroy();
    return;
  }
  const [status, reason, msg] = PARSER_ERRORS[error.code ?? ""] ?? [
    400,
    "Bad Request",
    "Bad request",
  ];
  const body = JSON.stringify({ result: "error", msg, code: "BAD_REQUEST" });
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

/** Listens on `port`/`metricsPort` (0 = any) and starts hearing other replicas' cache changes. */
export async function startServer(
  services: Services,
  options: { host: string; port: number; metricsPort: number; api?: Api; logger?: Logger },
): Promise<RunningServer> {
  await services.bus.start();
  await services.events.start();
  await services.rateLimiter.ready();
  const { config } = services;
  const server = http.createServer(
    {
      maxHeaderSize: config.CHAT_MAX_HEADER_BYTES,
      // Slow clients: the head must arrive within headersTimeout, the whole request
      // within requestTimeout (long-polls are unaffected: their request is short).
      headersTimeout: config.CHAT_HEADERS_TIMEOUT_SECONDS * 1000,
      requestTimeout: config.CHAT_REQUEST_TIMEOUT_SECONDS * 1000,
      // How often Node looks for connections past those times (its default is 30 s).
      connectionsCheckingInterval: 1000,
      keepAliveTimeout: config.CHAT_KEEP_ALIVE_SECONDS * 1000,
    },
    createApp(services, options.api),
  );
  server.on("clientError", answerClientError);
  const metricsServer = http.createServer((req, res) => {
    if (req.url !== "/metrics") {
      res.writeHead(404).end();
      return;
    }
    void services.metrics.registry.metrics().then((text) => {
      res.writeHead(200, { "content-type": services.metrics.registry.contentType }).end(text);
    });
  });
  const collector = setInterval(() => {
    collectIdleQueues(services.db, services.config.CHAT_EVENT_QUEUE_TIMEOUT_SECONDS * 1000)
      .then((count) => {
        if (count > 0) services.logger.info({ count }, "collected idle event queues");
      })
      .catch((error: unknown) => {
        services.logger.warn({ err: error }, "could not collect idle event queues");
      });
    deleteExpiredMessages(services.db, new Date())
      .then((count) => {
        if (count > 0) services.logger.info({ count }, "deleted messages past their retention");
      })
      .catch((error: unknown) => {
        services.logger.warn({ err: error }, "could not delete messages past their retention");
      });
  }, QUEUE_COLLECTION_INTERVAL_MS);
  collector.unref();
  const scheduler = setInterval(() => {
    deliverDueReminders(services.db, new Date())
      .then((count) => {
        if (count > 0) services.logger.info({ count }, "delivered reminders");
      })
      .catch((error: unknown) => {
        services.logger.warn({ err: error }, "could not deliver reminders");
      });
    deliverDueScheduledMessages(services.db, new Date())
      .then((count) => {
        if (count > 0) services.logger.info({ count }, "sent scheduled messages");
      })
      .catch((error: unknown) => {
        services.logger.warn({ err: error }, "could not send scheduled messages");
      });
  }, services.config.CHAT_REMINDER_POLL_SECONDS * 1000);
  scheduler.unref();
  const { mailer } = services;
  if (mailer === undefined)
    services.logger.warn("CHAT_SMTP_URL is not set: e-mails are kept in the outbox, not sent");
  let sending = false;
  const postman = setInterval(() => {
    if (mailer === undefined || sending) return;
    sending = true;
    deliverOutbox(services.db, mailer, {
      retrySeconds: services.config.CHAT_EMAIL_RETRY_SECONDS,
      logger: services.logger,
      counted: (outcome) => services.metrics.emails.inc({ outcome }),
    })
      .catch((error: unknown) => {
        services.logger.warn({ err: error }, "could not read the outbox");
      })
      .finally(() => {
        sending = false;
      });
  }, services.config.CHAT_EMAIL_POLL_SECONDS * 1000);
  postman.unref();
  let scanning = false;
  const watcher = setInterval(() => {
    if (scanning) return;
    scanning = true;
    queueMissedMessageEmails(
      services.db,
      (realm) => realmUrl(config, realm),
      config.CHAT_MISSED_EMAIL_DELAY_SECONDS * 1000,
    )
      .then((count) => {
        if (count > 0) services.logger.info({ count }, "queued missed-message e-mails");
      })
      .catch((error: unknown) => {
        services.logger.warn({ err: error }, "could not look for missed messages");
      })
      .finally(() => {
        scanning = false;
      });
  }, config.CHAT_MISSED_EMAIL_POLL_SECONDS * 1000);
  watcher.unref();
  server.listen(options.port, options.host);
  metricsServer.listen(options.metricsPort, options.host);
  await Promise.all([once(server, "listening"), once(metricsServer, "listening")]);
  return {
    server,
    metricsServer,
    async stop(graceMs) {
      clearInterval(collector);
      clearInterval(scheduler);
      clearInterval(postman);
      clearInterval(watcher);
      mailer?.close();
      const closed = new Promise((resolve) => server.close(resolve));
      // A kept-alive connection answers what it already carries, then closes
      // (`Connection: close`), so clients that keep sending on it move on.
      server.prependListener("request", (_req: http.IncomingMessage, res: http.ServerResponse) => {
        res.shouldKeepAlive = false;
      });
      // Waiting long-polls answer now, so they do not hold the shutdown.
      await services.events.stop();
      // Connections close as soon as they fall idle (a long-poll's once its
      // answer is written), not after their keep-alive time.
      server.closeIdleConnections();
      const sweep = setInterval(() => server.closeIdleConnections(), 100);
      const cut = setTimeout(() => server.closeAllConnections(), graceMs);
      cut.unref();
      await closed;
      clearInterval(sweep);
      clearTimeout(cut);
      await new Promise((resolve) => metricsServer.close(resolve));
      await services.bus.stop();
      await services.rateLimiter.close();
      await closeRenderPool();
      await closePasswordChecks();
      await services.db.close();
    },
  };
}
