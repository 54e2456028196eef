import type { AddressInfo } from "node:net";
import pino from "pino";
import { missingNodeFlags } from "@repo/env";
import { openDatabase } from "./db/open";
import { prepareDevelopmentDatabase, printFirstSteps } from "./dev-start";
import { isProduction, loadConfig } from "./lib/config";
import { startServer } from "./server";
import { createServices } from "./services";
import { NODE_FLAGS, PROCESS_ENV, START_COMMAND, missingProcessEnv } from "./node-flags";

async function main(): Promise<void> {
  const config = loadConfig(process.env);
  // Every request writes an access-log line: buffered, as pino's asynchronous logging does,
  // one write per few kilobytes instead of one per line (2-3.4 µs less per long-poll, measured
  // with servers polled in turn; docs/benchmarks.md). Written at least every 100 ms (the
  // destination's own timer), and at exit by pino itself.
  const logger = pino(
    { level: config.CHAT_LOG_LEVEL, base: { service: "chat-api" } },
    pino.destination({
      dest: 1,
      minLength: config.CHAT_LOG_BUFFER_BYTES,
      sync: false,
      periodicFlush: config.CHAT_LOG_BUFFER_BYTES > 0 ? 100 : 0,
    }),
  );
  const missing = missingNodeFlags(NODE_FLAGS);
  if (missing.length > 0)
    logger.warn(
      { missing, expected: NODE_FLAGS },
      `started without the service's Node flags: long-polls will cost more garbage collection (run \`${START_COMMAND}\`, as pnpm start and the image do)`,
    );
  const unset = missingProcessEnv();
  if (unset.length > 0)
    logger.warn(
      { missing: unset, expected: PROCESS_ENV },
      `started without the service's environment: threads' freed memory stays resident (run \`${START_COMMAND}\`, as pnpm start and the image do)`,
    );
  // Development migrates and seeds its database itself (in a child process); production runs
  // `db:migrate` before starting replicas.
  if (!isProduction(config)) await prepareDevelopmentDatabase();
  const db = await openDatabase(config, (error) =>
    logger.warn({ err: error.message }, "lost a database connection"),
  );
  const services = createServices(config, db, logger);
  const running = await startServer(services, {
    host: config.CHAT_HOST,
    port: config.PORT,
    metricsPort: config.CHAT_METRICS_PORT,
  });
  const { port } = running.server.address() as AddressInfo;
  logger.info(
    { port, metricsPort: config.CHAT_METRICS_PORT, database: db.kind },
    "chat-api listening",
  );
  if (!isProduction(config)) printFirstSteps(services);

  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, "draining");
    running
      .stop(config.CHAT_SHUTDOWN_GRACE_SECONDS * 1000)
      .then(() => {
        logger.info("stopped");
        process.exit(0);
      })
      .catch((error: unknown) => {
        logger.error({ err: error }, "unclean shutdown");
        process.exit(1);
      });
  };
  process.once("SIGTERM", () => stop("SIGTERM"));
  process.once("SIGINT", () => stop("SIGINT"));
}

main().catch((error: unknown) => {
  process.stderr.write(
    `chat-api failed to start: ${error instanceof Error ? error.message : String(error)}\n`,
  );
  process.exit(1);
});
