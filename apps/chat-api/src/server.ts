import http from "node:http";
import { once } from "node:events";
import type { Logger } from "pino";
import { createApp } from "./app";
import type { Api } from "./lib/typed-endpoint";
import type { Services } from "./services";

/** A listening chat-api: the API port, the metrics port, and a graceful stop. */
export interface RunningServer {
  server: http.Server;
  metricsServer: http.Server;
  /** Stops accepting, lets in-flight requests finish (cut after `graceMs`), then closes everything. */
  stop(graceMs: number): Promise<void>;
}

/** Listens on `port`/`metricsPort` (0 = any) and starts hearing other replicas' cache changes. */
export async function startServer(
  services: Services,
  options: { host: string; port: number; metricsPort: number; api?: Api; logger?: Logger },
): Promise<RunningServer> {
  await services.bus.start();
  await services.rateLimiter.ready();
  const server = http.createServer(createApp(services, options.api));
  const metricsServer = http.createServer((req, res) => {
    if (req.url !== "/metrics") {
      res.writeHead(404).end();
      return;
    }
    void services.metrics.registry.metrics().then((text) => {
      res.writeHead(200, { "content-type": services.metrics.registry.contentType }).end(text);
    });
  });
  server.listen(options.port, options.host);
  metricsServer.listen(options.metricsPort, options.host);
  await Promise.all([once(server, "listening"), once(metricsServer, "listening")]);
  return {
    server,
    metricsServer,
    async stop(graceMs) {
      const closed = new Promise((resolve) => server.close(resolve));
      server.closeIdleConnections();
      const cut = setTimeout(() => server.closeAllConnections(), graceMs);
      cut.unref();
      await closed;
      clearTimeout(cut);
      await new Promise((resolve) => metricsServer.close(resolve));
      await services.bus.stop();
      await services.rateLimiter.close();
      await services.db.close();
    },
  };
}
