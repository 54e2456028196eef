import type { Config } from "../lib/config";
import { createDatabase, type Database } from "./database";

/** Opens the database the configuration names. */
export function openDatabase(config: Config): Promise<Database> {
  return config.DATABASE_URL === undefined
    ? createDatabase({ kind: "pglite", dataDir: config.CHAT_DATA_DIR })
    : createDatabase({
        kind: "postgres",
        url: config.DATABASE_URL,
        poolSize: config.CHAT_DATABASE_POOL_SIZE,
        ...(config.CHAT_DATABASE_SCHEMA === undefined
          ? {}
          : { schema: config.CHAT_DATABASE_SCHEMA }),
      });
}
