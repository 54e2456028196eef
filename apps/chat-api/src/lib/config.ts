import { loadEnv } from "@repo/env";
import { z } from "zod";
import { DEFAULT_RENDER_SETTINGS, type RenderPoolSettings } from "./render-pool";

const port = z.coerce.number().int().min(0).max(65535);
const flag = z
  .enum(["true", "false", "1", "0", "yes", "no", "on", "off"])
  .transform((v) => ["true", "1", "yes", "on"].includes(v));
const origins = z.string().transform((v) =>
  v
    .split(",")
    .map((o) => o.trim())
    .filter((o) => o !== ""),
);

/** The configuration table of the behaviour contract, plus the settings of ours that the README lists. */
const schema = z.object({
  PORT: port.default(9991),
  CHAT_HOST: z.string().min(1).default("0.0.0.0"),
  CHAT_METRICS_PORT: port.default(9191),
  CHAT_EXTERNAL_URL: z
    .url({ protocol: /^https?$/, error: "must be an http(s) URL" })
    .default("http://localhost:9991")
    .transform((v) => new URL(v)),
  NODE_ENV: z.string().default("development"),
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, "must be a postgresql:// URL")
    .optional(),
  /** A PostgreSQL schema other than `public` for chat-api's tables. */
  CHAT_DATABASE_SCHEMA: z
    .string()
    .regex(/^[a-z_][a-z0-9_]{0,62}$/, "must be a lower-case SQL identifier")
    .optional(),
  CHAT_DATABASE_POOL_SIZE: z.coerce.number().int().min(1).max(1000).default(10),
  CHAT_DATA_DIR: z.string().min(1).default(".data/chat"),
  /**
   * PGlite's shared buffers (PostgreSQL's `shared_buffers`). PGlite clears them
   * at every start: 128MB costs about 2 s of CPU there, 16MB a tenth of it.
   * They live in PGlite's WebAssembly memory, resident: 16MB keeps an idle
   * server near 200 MB where 128MB kept it near 350 MB. Point reads were as
   * fast at 16MB as at 128MB (PGlite's per-statement cost dominates; the
   * system's page cache holds the files).
   */
  CHAT_PGLITE_SHARED_BUFFERS: z
    .string()
    .regex(/^[1-9][0-9]{0,5}(kB|MB|GB)$/, "must be a size such as 16MB")
    .default("16MB"),
  CHAT_WEB_PUBLIC_STREAMS_ENABLED: flag.default(false),
  CHAT_CAN_ACCESS_ALL_USERS_GROUP_LIMITS_PRESENCE: flag.default(false),
  /**
   * Zulip's USER_LIMIT_FOR_SENDING_PRESENCE_UPDATE_EVENTS: past this many
   * users in a presence change's audience, no `presence` event is sent
   * (clients learn of it from their minute's presence ping).
   */
  CHAT_PRESENCE_EVENTS_USER_LIMIT: z.coerce.number().int().min(0).default(100),
  CHAT_PUSH_BOUNCER_URL: z
    .url({ protocol: /^https?$/, error: "must be an http(s) URL" })
    .optional(),
  /** The push bouncer's credentials (HTTP Basic), when it asks for them. */
  CHAT_PUSH_BOUNCER_ORG_ID: z.string().min(1).optional(),
  CHAT_PUSH_BOUNCER_ORG_KEY: z.string().min(1).optional(),
  /** How long a call to the push bouncer may take. */
  CHAT_PUSH_BOUNCER_TIMEOUT_MS: z.coerce.number().int().positive().default(10_000),
  CHAT_RATE_LIMIT: flag.default(true),
  CHAT_RATE_LIMIT_REDIS_URL: z
    .string()
    .regex(/^rediss?:\/\//, "must be a redis:// URL")
    .optional(),
  /** Key prefix in Redis, so deployments can share one Redis. */
  CHAT_RATE_LIMIT_REDIS_PREFIX: z
    .string()
    .regex(/^[\w:.-]{1,64}$/, "must be letters, digits, _ : . -")
    .default("chat_rl"),
  /** Requests per minute of one authenticated user. */
  CHAT_RATE_LIMIT_USER_PER_MINUTE: z.coerce.number().int().positive().default(200),
  /** Requests per minute of one IP address without authentication. */
  CHAT_RATE_LIMIT_IP_PER_MINUTE: z.coerce.number().int().positive().default(100),
  CHAT_MARK_READ_BUDGET_MS: z.coerce.number().int().positive().default(50_000),
  /** How long one POST /streams/{id}/delete_topic deletes before answering `complete: false` (Zulip's 50 s). */
  CHAT_DELETE_TOPIC_BUDGET_MS: z.coerce.number().int().positive().default(50_000),
  CHAT_LOG_LEVEL: z
    .enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"])
    .default("info"),
  /**
   * Log lines are buffered up to this many bytes before one write (pino's
   * asynchronous logging), and written at least every 100 ms and at exit; 0
   * writes each line as it comes. At most 16,383: pino's destination
   * (sonic-boom) refuses a buffer as large as its largest write, 16 KiB.
   */
  CHAT_LOG_BUFFER_BYTES: z.coerce.number().int().min(0).max(16_383).default(4096),
  CHAT_CORS_ORIGINS: origins.default([]),
  /**
   * Oldest client versions served, as `Name=version` pairs (`ZulipMobile=27.192`); a
   * `User-Agent` of an older one gets `is_incompatible: true` in server_settings.
   */
  CHAT_MINIMUM_CLIENT_VERSIONS: z
    .string()
    .regex(
      /^(\s*[\w.-]+=\d+(\.\d+)*\s*)(,\s*[\w.-]+=\d+(\.\d+)*\s*)*$/,
      "must be Name=version pairs, comma-separated",
    )
    .transform((v) =>
      Object.fromEntries(
        v.split(",").map((pair) => {
          const [name = "", version = ""] = pair.trim().split("=");
          return [name, version];
        }),
      ),
    )
    .optional(),
  /** A waiting GET /events answers with a heartbeat event after this long without events. */
  CHAT_EVENT_HEARTBEAT_SECONDS: z.coerce.number().positive().default(50),
  /** An event queue nobody has polled for this long is deleted. */
  CHAT_EVENT_QUEUE_TIMEOUT_SECONDS: z.coerce.number().positive().default(600),
  /** How often each replica looks for due reminders (they are claimed with SKIP LOCKED). */
  CHAT_REMINDER_POLL_SECONDS: z.coerce.number().positive().default(5),
  /**
   * The mail server e-mails go through: `smtp://` (STARTTLS when offered) or
   * `smtps://`, with `user:password@` if it asks for them. Unset: e-mails stay
   * in the outbox (and the log).
   */
  CHAT_SMTP_URL: z
    .url({ protocol: /^smtps?$/, error: "must be an smtp:// or smtps:// URL" })
    .optional(),
  /** The sender of the server's e-mails; default `Zulip <noreply@HOST>` of CHAT_EXTERNAL_URL. */
  CHAT_EMAIL_FROM: z
    .string()
    .min(3)
    .max(320)
    .regex(/^[^\r\n]*$/, "must be one line")
    .optional(),
  /** How often each replica sends what the outbox holds. */
  CHAT_EMAIL_POLL_SECONDS: z.coerce.number().positive().default(2),
  /** The first retry's delay after a failed send; each next one doubles it (at most an hour). */
  CHAT_EMAIL_RETRY_SECONDS: z.coerce.number().positive().default(30),
  /**
   * How long a direct message or mention may stay unread, while none of its
   * recipient's clients polls, before it is e-mailed (Zulip's batching period: 2 minutes).
   */
  CHAT_MISSED_EMAIL_DELAY_SECONDS: z.coerce.number().nonnegative().default(120),
  /** How often a replica looks for messages to e-mail as missed. */
  CHAT_MISSED_EMAIL_POLL_SECONDS: z.coerce.number().positive().default(10),
  /** Largest request body (form or multipart), in bytes; larger is 413. */
  CHAT_MAX_BODY_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .default(1024 * 1024),
  /** Largest request head (request line and headers, so the URL too), in bytes; larger is 431. */
  CHAT_MAX_HEADER_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .default(16 * 1024),
  /** Deepest nesting of a JSON parameter; deeper is refused before parsing. */
  CHAT_MAX_JSON_DEPTH: z.coerce.number().int().min(1).default(32),
  /** A client must send its whole request head within this time (slow-client protection). */
  CHAT_HEADERS_TIMEOUT_SECONDS: z.coerce.number().positive().default(10),
  /** A whole request (body included) must arrive within this time. */
  CHAT_REQUEST_TIMEOUT_SECONDS: z.coerce.number().positive().default(30),
  /**
   * How long an idle keep-alive connection stays open. Longer than a load
   * balancer's own idle time (60 s for ingress-nginx's upstreams and AWS's),
   * so that the balancer, not the server, closes it: a server closing first
   * races the balancer's next request on it (a 502). Node's default is 5 s.
   */
  CHAT_KEEP_ALIVE_SECONDS: z.coerce.number().positive().max(3600).default(65),
  /** Most drafts, saved snippets, pending reminders and devices one user may keep (each). */
  CHAT_MAX_OBJECTS_PER_USER: z.coerce.number().int().min(1).max(1_000_000).default(1000),
  /** Most bots one person may own, deactivated ones included (their files count against the owner's quota). */
  CHAT_MAX_BOTS_PER_USER: z.coerce.number().int().min(0).max(10_000).default(20),
  /** Invitations one realm may send in 24 hours (Zulip's `max_invites`); more is INVITATION_FAILED. */
  CHAT_MAX_INVITES_PER_DAY: z.coerce.number().int().min(1).max(1_000_000).default(100),
  /** Reports of messages (POST /messages/{id}/report) one person may make in an hour. */
  CHAT_MAX_REPORTS_PER_HOUR: z.coerce.number().int().min(1).max(10_000).default(20),
  /** Most event queues one user may hold; registering past it collects the least recently polled. */
  CHAT_MAX_QUEUES_PER_USER: z.coerce.number().int().min(1).max(10_000).default(50),
  /**
   * Most `POST /register` one user may have running at once on one replica
   * (each reads on up to 3 pool connections); one more is 429 with Retry-After.
   */
  CHAT_MAX_REGISTERS_PER_USER: z.coerce.number().int().min(1).max(1000).default(2),
  /**
   * Most requests of one user that run at once on one replica (each holds a
   * pool connection or a few); the next CHAT_MAX_QUEUED_PER_USER wait their
   * turn, one more is 429 with Retry-After. Long-polls are counted apart.
   */
  CHAT_MAX_REQUESTS_PER_USER: z.coerce.number().int().min(1).max(1000).default(4),
  CHAT_MAX_QUEUED_PER_USER: z.coerce.number().int().min(0).max(100_000).default(100),
  /** Most long-polls (GET /events) one user may hold open on one replica. */
  CHAT_MAX_POLLS_PER_USER: z.coerce.number().int().min(1).default(20),
  /** Largest uploaded file (POST /user_uploads), in MiB: register's `max_file_upload_size_mib`. */
  CHAT_MAX_UPLOAD_MIB: z.coerce.number().int().min(1).max(2047).default(25),
  /** Largest custom emoji image (POST /realm/emoji/{name}), in MiB. */
  CHAT_MAX_EMOJI_MIB: z.coerce.number().int().min(1).max(25).default(1),
  /** Total size of the files one user may keep uploaded, in MiB. */
  CHAT_UPLOAD_QUOTA_MIB_PER_USER: z.coerce.number().int().min(1).default(1024),
  /**
   * An S3 bucket for uploaded files; without it they are kept under
   * `CHAT_DATA_DIR/uploads`. Credentials come from `CHAT_S3_ACCESS_KEY_ID` and
   * `CHAT_S3_SECRET_ACCESS_KEY`, else from the AWS SDK's usual sources.
   */
  CHAT_S3_BUCKET: z
    .string()
    .regex(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, "must be an S3 bucket name")
    .optional(),
  /** An S3-compatible endpoint (MinIO, Ceph, R2...); path-style addressing is used with it. */
  CHAT_S3_ENDPOINT: z.url({ protocol: /^https?$/, error: "must be an http(s) URL" }).optional(),
  CHAT_S3_REGION: z.string().min(1).default("us-east-1"),
  CHAT_S3_ACCESS_KEY_ID: z.string().min(1).optional(),
  CHAT_S3_SECRET_ACCESS_KEY: z.string().min(1).optional(),
  /** Worker threads that render messages and descriptions (Markdown, TeX, linkifiers). */
  CHAT_RENDER_THREADS: z.coerce
    .number()
    .int()
    .min(1)
    .max(64)
    .default(DEFAULT_RENDER_SETTINGS.threads),
  /** How long one render may run on its thread; past it the thread is terminated and replaced. */
  CHAT_RENDER_TIME_LIMIT_MS: z.coerce
    .number()
    .int()
    .min(10)
    .max(60_000)
    .default(DEFAULT_RENDER_SETTINGS.timeLimitMs),
  /** Renders of people's content that may wait for a thread, everyone's together; more is 429. */
  CHAT_RENDER_QUEUE_LIMIT: z.coerce
    .number()
    .int()
    .min(0)
    .max(100_000)
    .default(DEFAULT_RENDER_SETTINGS.queueLimit),
  /** Renders one person may have running or waiting at once; more is 429. */
  CHAT_RENDER_PER_USER_LIMIT: z.coerce
    .number()
    .int()
    .min(1)
    .max(1000)
    .default(DEFAULT_RENDER_SETTINGS.perPersonLimit),
  /** Longest rendered HTML of a message or description, in bytes; longer is refused. */
  CHAT_RENDER_MAX_HTML_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .max(100_000_000)
    .default(DEFAULT_RENDER_SETTINGS.maxHtmlBytes),
  /** Seconds a render thread may wait for work before it ends (the next render starts one). */
  CHAT_RENDER_THREAD_IDLE_SECONDS: z.coerce
    .number()
    .int()
    .min(1)
    .max(86_400)
    .default(DEFAULT_RENDER_SETTINGS.idleMs / 1000),
  /** Each render thread's heap, in MiB; a render that needs more ends its thread and is refused. */
  CHAT_RENDER_THREAD_HEAP_MB: z.coerce
    .number()
    .int()
    .min(16)
    .max(16_384)
    .default(DEFAULT_RENDER_SETTINGS.threadHeapMb),
  /** Most MiB of message text (source and HTML) one GET /messages answer carries. */
  CHAT_MAX_FETCH_MIB: z.coerce.number().int().min(1).max(4096).default(32),
  /**
   * The replica's resident memory budget in MiB: past it (or past 85% of V8's
   * heap limit) new requests are answered 503 until memory falls back. 0: 85%
   * of the container's memory limit, or of the machine's memory.
   */
  CHAT_MEMORY_BUDGET_MB: z.coerce.number().int().min(0).max(1_048_576).default(0),
  /** On SIGTERM, how long in-flight requests may run before connections are cut. */
  CHAT_SHUTDOWN_GRACE_SECONDS: z.coerce.number().positive().default(25),
});

/** Parsed configuration. */
export type Config = z.infer<typeof schema>;

/** Reads the configuration from `env`; throws one message naming every bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv): Config {
  return loadEnv(schema, env);
}

/** Whether this is a production server (no dev_fetch_api_key, no demo seed). */
export function isProduction(config: Config): boolean {
  return config.NODE_ENV === "production";
}

/** The render pool's settings (lib/render-pool.ts). */
export function renderSettings(config: Config): RenderPoolSettings {
  return {
    threads: config.CHAT_RENDER_THREADS,
    timeLimitMs: config.CHAT_RENDER_TIME_LIMIT_MS,
    queueLimit: config.CHAT_RENDER_QUEUE_LIMIT,
    perPersonLimit: config.CHAT_RENDER_PER_USER_LIMIT,
    maxHtmlBytes: config.CHAT_RENDER_MAX_HTML_BYTES,
    threadHeapMb: config.CHAT_RENDER_THREAD_HEAP_MB,
    idleMs: config.CHAT_RENDER_THREAD_IDLE_SECONDS * 1000,
  };
}
