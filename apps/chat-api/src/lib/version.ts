import { readFileSync } from "node:fs";
import { join } from "node:path";
import { CHAT_FEATURE_LEVEL } from "@repo/feature-levels";

function packageVersion(): string {
  const text = readFileSync(join(__dirname, "../../package.json"), "utf8");
  return (JSON.parse(text) as { version: string }).version;
}

/** `chat_version`: the version of this package. */
export const CHAT_VERSION = packageVersion();

/** `chat_merge_base`: the commit the build was made from, or the version when unknown. */
export const CHAT_MERGE_BASE = process.env.CHAT_BUILD_COMMIT ?? CHAT_VERSION;

/**
 * The version fields of `GET /server_settings` and `POST /register`: the spec's
 * `chat_*` names and Zulip's `zulip_*` names with the same values, since real
 * Zulip clients read only the latter (the Python library asserts
 * `zulip_version` in its constructor; a missing feature level reads as 0).
 */
export const VERSION_FIELDS = {
  chat_feature_level: CHAT_FEATURE_LEVEL,
  chat_version: CHAT_VERSION,
  chat_merge_base: CHAT_MERGE_BASE,
  zulip_feature_level: CHAT_FEATURE_LEVEL,
  zulip_version: CHAT_VERSION,
  zulip_merge_base: CHAT_MERGE_BASE,
} as const;
