import type { Config } from "../lib/config";
import { createDatabase, type Database } from "./database";

/** Opens the database the configuration names; `onError` hears of lost connections. */
export function openDatabase(config: Config, onError?: (error: Error) => void): Promise<Database> {
  return config.DATABASE_URL === undefined
    ? createDatabase({
        kind: "pglite",
        dataDir: config.CHAT_DATA_DIR,
        sharedBuffers: config.CHAT_PGLITE_SHARED_BUFFERS,
      })
    : createDatabase(
        {
          kind: "postgres",
          url: config.DATABASE_URL,
          poolSize: config.CHAT_DATABASE_POOL_SIZE,
          ...(config.CHAT_DATABASE_SCHEMA === undefined
            ? {}
            : { schema: config.CHAT_DATABASE_SCHEMA }),
        },
        onError,
      );
}
