import { spawn } from "node:child_process";
import { once } from "node:events";
import { realmCount } from "./db/queries/realms";
import { seedDemoRealm } from "./cli/demo-data";
import { closeRenderPool } from "./lib/render-pool";
import type { Services } from "./http/context";

/**
 * Development start, before the server opens its database: migrates it and
 * seeds the demo realm into it when it has none, in a child process
 * (dev-prepare.ts), so that the server keeps none of the memory that took: a
 * first start on the embedded database then holds what a later one holds
 * (docs/benchmarks.md, "chat-api: memory"). The child runs with this
 * process's Node flags and environment, but without its inspector or
 * profiler, and writes its log lines to the same output.
 */
export async function prepareDevelopmentDatabase(): Promise<void> {
  const flags = process.execArgv.filter(
    (flag) => !/^--(inspect|cpu-prof|heap-prof|heapsnapshot)/.test(flag),
  );
  const child = spawn(process.execPath, [...flags, require.resolve("./dev-prepare")], {
    stdio: ["ignore", "inherit", "inherit"],
  });
  const [code, signal] = (await once(child, "exit")) as [number | null, NodeJS.Signals | null];
  if (code !== 0)
    throw new Error(
      `preparing the development database failed (${signal ?? `exit ${String(code)}`})`,
    );
}

/** Seeds the demo realm into a database that has no realm (dev-prepare.ts, in its own process). */
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
