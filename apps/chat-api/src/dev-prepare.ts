/**
 * The development start's first step, in a process of its own (started by
 * `prepareDevelopmentDatabase` in dev-start.ts): migrates the database the
 * configuration names and seeds the demo realm into it when it has no realm,
 * then exits. The memory that took (the seed's render threads, PGlite's pages
 * and malloc's arenas, which a process does not give back) leaves with it.
 */
import pino from "pino";
import { openDatabase } from "./db/open";
import { migrate } from "./db/migrate";
import { seedIfEmpty } from "./dev-start";
import { loadConfig } from "./lib/config";

async function main(): Promise<void> {
  const config = loadConfig(process.env);
  const logger = pino({ level: config.CHAT_LOG_LEVEL, base: { service: "chat-api" } });
  const db = await openDatabase(config);
  try {
    const applied = await migrate(db.sql);
    if (applied.length > 0) logger.info({ applied }, "applied migrations");
    await seedIfEmpty({ db, logger });
  } finally {
    await db.close();
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(
      `preparing the database failed: ${error instanceof Error ? error.message : String(error)}\n`,
    );
    process.exit(1);
  },
);
