import type { Logger } from "pino";
import type { Database } from "../db/database";
import type { EventHub } from "../realtime/hub";
import type { AuthCache } from "../caches/auth";
import type { CacheBus } from "../caches/cache-bus";
import type { PresenceBoards } from "../caches/presence-boards";
import type { RealmDirectory } from "../caches/realms";
import type { Config } from "../lib/config";
import type { AppMetrics } from "../lib/metrics";
import type { RateLimiter } from "../lib/rate-limit";
import type { UploadStore } from "../lib/upload-store";
import type { Mailer } from "../lib/email";

/** Everything a request may need, built once per process (or per test). */
export interface Services {
  config: Config;
  db: Database;
  logger: Logger;
  metrics: AppMetrics;
  realms: RealmDirectory;
  auth: AuthCache;
  bus: CacheBus;
  rateLimiter: RateLimiter;
  events: EventHub;
  /** Each realm's presences, for the modern presence answer. */
  presence: PresenceBoards;
  /** Where uploaded files are kept (a directory, or an S3 bucket). */
  uploads: UploadStore;
  /** The mail server's sender (`CHAT_SMTP_URL`); without one, e-mails wait in the outbox. */
  mailer: Mailer | undefined;
}
