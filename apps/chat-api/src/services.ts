import type { Logger } from "pino";
import type { Services } from "./http/context";
import type { Database } from "./db/database";
import { EventHub } from "./realtime/hub";
import { AuthCache } from "./caches/auth";
import { CacheBus } from "./caches/cache-bus";
import { type Config, renderSettings } from "./lib/config";
import { createMetrics } from "./lib/metrics";
import { PresenceBoards } from "./caches/presence-boards";
import { createRateLimiter, unlimited } from "./lib/rate-limit";
import { RealmDirectory } from "./caches/realms";
import { configureRenderPool } from "./lib/render-pool";
import { createUploadStore } from "./lib/upload-store";
import { createMailer } from "./lib/email";

/** Builds the services over an open database; call `bus.start()` to hear other replicas. */
export function createServices(config: Config, db: Database, logger: Logger): Services {
  configureRenderPool(renderSettings(config));
  const realms = new RealmDirectory(db, config.CHAT_EXTERNAL_URL.hostname);
  const auth = new AuthCache(db);
  const bus = new CacheBus(db.sql, logger);
  bus.register(realms);
  bus.register(auth);
  const rateLimiter = config.CHAT_RATE_LIMIT
    ? createRateLimiter(
        {
          userPerMinute: config.CHAT_RATE_LIMIT_USER_PER_MINUTE,
          ipPerMinute: config.CHAT_RATE_LIMIT_IP_PER_MINUTE,
          prefix: config.CHAT_RATE_LIMIT_REDIS_PREFIX,
        },
        logger,
        config.CHAT_RATE_LIMIT_REDIS_URL,
      )
    : unlimited;
  return {
    config,
    db,
    logger,
    metrics: createMetrics(() => db.poolStats()),
    realms,
    auth,
    bus,
    rateLimiter,
    events: new EventHub(db, logger),
    presence: new PresenceBoards(db),
    uploads: createUploadStore(config),
    mailer: createMailer(config),
  };
}
