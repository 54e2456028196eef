import { seedDemoRealm } from "./db/seed";
import type { Services } from "./services";

/**
 * Development start: seeds the demo realm into an empty database and prints
 * how to get a key and make a first call.
 */
export async function developmentStart({ db, config, logger }: Services): Promise<void> {
  if ((await db.prisma.realm.count()) === 0) {
    await seedDemoRealm(db.prisma);
    logger.info("seeded the demo realm");
  }
  const base = new URL("/api/v1", config.CHAT_EXTERNAL_URL).href;
  process.stdout.write(
    [
      "",
      `chat-api is running on ${base} (demo realm: desdemona, iago, hamlet... @example.com)`,
      "Get an API key, then make a first call:",
      `  curl -sX POST ${base}/dev_fetch_api_key --data-urlencode username=hamlet@example.com`,
      `  curl -s -u hamlet@example.com:API_KEY ${base}/users/me`,
      "",
    ].join("\n"),
  );
}
