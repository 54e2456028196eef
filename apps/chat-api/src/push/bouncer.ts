import { JsonableError } from "@repo/envelope";
import type { Logger } from "pino";
import { request } from "undici";
import type { Config } from "../lib/config";

/**
 * The push bouncer: the service that holds push tokens and talks to FCM and
 * APNs. Calls are form posts under `/api/v1/remotes/push/`, with HTTP Basic
 * credentials when configured and a timeout; any failure (network, timeout,
 * a non-2xx answer, a body that is not Zulip's success envelope) is a
 * {@link BouncerError}.
 */
export class Bouncer {
  constructor(
    private readonly base: URL,
    private readonly timeoutMs: number,
    private readonly credentials: string | undefined,
  ) {}

  /** The bouncer of `config`, or undefined when none is configured. */
  static fromConfig(config: Config): Bouncer | undefined {
    if (config.CHAT_PUSH_BOUNCER_URL === undefined) return undefined;
    const id = config.CHAT_PUSH_BOUNCER_ORG_ID;
    const key = config.CHAT_PUSH_BOUNCER_ORG_KEY;
    return new Bouncer(
      new URL(config.CHAT_PUSH_BOUNCER_URL),
      config.CHAT_PUSH_BOUNCER_TIMEOUT_MS,
      id === undefined || key === undefined
        ? undefined
        : `Basic ${Buffer.from(`${id}:${key}`).toString("base64")}`,
    );
  }

  /** POSTs `fields` to `path` (under `/api/v1/remotes/push/`); resolves when the bouncer says success. */
  async post(path: string, fields: Record<string, string | number>): Promise<void> {
    const url = new URL(`api/v1/remotes/push/${path}`, withSlash(this.base));
    const body = new URLSearchParams(
      Object.entries(fields).map(([k, v]): [string, string] => [k, String(v)]),
    ).toString();
    let status: number;
    let text: string;
    try {
      const response = await request(url, {
        method: "POST",
        headers: {
          "content-type": "application/x-www-form-urlencoded",
          ...(this.credentials === undefined ? {} : { authorization: this.credentials }),
        },
        body,
        headersTimeout: this.timeoutMs,
        bodyTimeout: this.timeoutMs,
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      status = response.statusCode;
      text = await response.body.text();
    } catch (error) {
      throw new BouncerError(`${path}: ${error instanceof Error ? error.message : String(error)}`);
    }
    if (status < 200 || status > 299) throw new BouncerError(`${path}: HTTP ${status}`);
    let result: unknown;
    try {
      result = (JSON.parse(text) as { result?: unknown }).result;
    } catch {
      throw new BouncerError(`${path}: the answer is not JSON`);
    }
    if (result !== "success") throw new BouncerError(`${path}: the answer is not a success`);
  }
}

function withSlash(url: URL): URL {
  return url.pathname.endsWith("/") ? url : new URL(`${url.href}/`);
}

/** A failed call to the bouncer; `detail` goes to the log, never to the client. */
export class BouncerError extends Error {
  constructor(readonly detail: string) {
    super(detail);
  }
}

/** What clients hear when the bouncer fails: HTTP 502, nothing stored. */
export function bouncerUnavailable(logger: Logger, error: BouncerError): JsonableError {
  logger.warn({ detail: error.detail }, "push bouncer call failed");
  return new JsonableError(
    "The push notification service could not be reached; try again later.",
    "BAD_REQUEST",
    502,
  );
}
