import { realmCount } from "./db/queries/realms";
import { seedDemoRealm } from "./cli/demo-data";
import { closeRenderPool } from "./lib/render-pool";
import type { Services } from "./http/context";

/** Development start, before listening: seeds the demo realm into a database that has no realm. */
export async function seedIfEmpty({ db, logger }: Pick<Services, "db" | "logger">): Promise<void> {
  if ((await realmCount(db)) === 0) {
    await seedDemoRealm(db);
    // The seed's render threads end with it (38 MB) rather than after their
    // idle time; the first render of the server's own starts new ones.
    await closeRenderPool();
    logger.info("seeded the demo realm");
  }
}

/** Development start, once listening: how to get a key and make a first call. */
export function printFirstSteps({ config }: Pick<Services, "config">): void {
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
