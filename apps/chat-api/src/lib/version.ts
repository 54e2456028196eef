import { readFileSync } from "node:fs";
import { join } from "node:path";

function packageVersion(): string {
  const text = readFileSync(join(__dirname, "../../package.json"), "utf8");
  return (JSON.parse(text) as { version: string }).version;
}

/** `chat_version`: the version of this package. */
export const CHAT_VERSION = packageVersion();

/** `chat_merge_base`: the commit the build was made from, or the version when unknown. */
export const CHAT_MERGE_BASE = process.env.CHAT_BUILD_COMMIT ?? CHAT_VERSION;
