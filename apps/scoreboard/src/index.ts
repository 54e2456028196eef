import http from "node:http";
import { once } from "node:events";
import pino from "pino";
import { missingNodeFlags } from "@repo/env";
import { ScoreboardService } from "@repo/proto-gen/scoreboard/v1";
import { loadConfig } from "./config";
import { HealthRegistry, ServingStatus } from "./health";
import { createMetrics } from "./metrics";
import { parseOrigins } from "./cors";
import { createScoreboardServer } from "./server";
import { Refresher } from "./snapshot/refresher";
import { sourceFromSetting } from "./snapshot/sources";
import { SnapshotStore } from "./snapshot/store";
import { NODE_FLAGS } from "./node-flags";

async function main(): Promise<void> {
  const config = loadConfig(process.env);
  const logger = pino({ level: config.SCOREBOARD_LOG_LEVEL, base: { service: "scoreboard" } });
  const store = new SnapshotStore();
  const metrics = createMetrics(store);
  const health = new HealthRegistry([ScoreboardService.typeName]);
  store.onSwap(() => health.setAll(ServingStatus.SERVING));

  const source = sourceFromSetting(config.SCOREBOARD_SOURCE);
  const refresher = new Refresher({
    source,
    store,
    logger,
    metrics,
    periodMs: config.SCOREBOARD_REFRESH_SECONDS * 1000,
    timeoutMs: config.SCOREBOARD_FETCH_TIMEOUT_SECONDS * 1000,
    maxShrink: config.SCOREBOARD_MAX_SHRINK,
  });

  const age = config.SCOREBOARD_MAX_CONNECTION_AGE_SECONDS;
  const { server, shutdown } = createScoreboardServer(
    { store, health, metrics, logger },
    {
      maxConnectionAgeMs: age === undefined ? undefined : age * 1000,
      maxConnectionAgeGraceMs: config.SCOREBOARD_MAX_CONNECTION_AGE_GRACE_SECONDS * 1000,
      corsOrigins: parseOrigins(config.SCOREBOARD_CORS_ORIGINS),
      maxConcurrentStreams: config.SCOREBOARD_MAX_CONCURRENT_STREAMS,
      streamIdleTimeoutMs: config.SCOREBOARD_STREAM_IDLE_TIMEOUT_SECONDS * 1000,
      maxConnections: config.SCOREBOARD_MAX_CONNECTIONS,
      headersTimeoutMs: config.SCOREBOARD_HEADERS_TIMEOUT_SECONDS * 1000,
      requestTimeoutMs: config.SCOREBOARD_REQUEST_TIMEOUT_SECONDS * 1000,
    },
  );
  const metricsServer = http.createServer((req, res) => {
    if (req.url !== "/metrics") {
      res.writeHead(404).end();
      return;
    }
    void metrics.registry.metrics().then((text) => {
      res.writeHead(200, { "content-type": metrics.registry.contentType }).end(text);
    });
  });

  refresher.start();
  server.listen(config.SCOREBOARD_PORT, config.SCOREBOARD_HOST);
  metricsServer.listen(config.SCOREBOARD_METRICS_PORT, config.SCOREBOARD_HOST);
  await Promise.all([once(server, "listening"), once(metricsServer, "listening")]);
  logger.info(
    {
      port: config.SCOREBOARD_PORT,
      host: config.SCOREBOARD_HOST,
      metricsPort: config.SCOREBOARD_METRICS_PORT,
      source: source.description,
    },
    "scoreboard listening (gRPC, gRPC-Web, Connect; h2c and HTTP/1.1)",
  );

  const missing = missingNodeFlags(NODE_FLAGS);
  if (missing.length > 0)
    logger.warn(
      { missing, expected: NODE_FLAGS },
      `started without the service's Node flags: calls cost more CPU (run \`node ${NODE_FLAGS.join(" ")} dist/index.js\`, as pnpm start and the image do)`,
    );

  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, "draining");
    refresher.stop();
    void shutdown(config.SCOREBOARD_SHUTDOWN_GRACE_SECONDS * 1000).then(() => {
      metricsServer.close();
      logger.info("stopped");
      process.exit(0);
    });
  };
  process.once("SIGTERM", () => stop("SIGTERM"));
  process.once("SIGINT", () => stop("SIGINT"));
}

main().catch((error: unknown) => {
  process.stderr.write(
    `scoreboard failed to start: ${error instanceof Error ? error.message : String(error)}\n`,
  );
  process.exit(1);
});
