/**
 * What the stress tests share: chat-api as a real process (the built
 * `dist/index.js`, as deployed), its log lines, and calls over real HTTP.
 */
import { join } from "node:path";
import {
  type PrivatePostgres,
  type StartedService,
  freePort,
  privatePostgres,
  startService,
} from "@repo/bench-kit";
import { Client } from "pg";
import { Agent, request } from "undici";
import { NODE_FLAGS } from "../src/node-flags";

/** A running chat-api process. */
export interface ChatProcess extends StartedService {
  port: number;
  metricsPort: number;
  base: string;
}

/**
 * Starts `node [its Node flags, nodeArgs] dist/index.js` with `env`
 * (development mode: migrates and seeds an empty database).
 */
export async function startChatApi(
  env: Record<string, string>,
  nodeArgs: string[] = [],
): Promise<ChatProcess> {
  const [port, metricsPort] = [await freePort(), await freePort()];
  const started = await startService({
    script: join(__dirname, "../dist/index.js"),
    port,
    nodeArgs: [...NODE_FLAGS, ...nodeArgs],
    env: {
      NODE_ENV: "development",
      CHAT_HOST: "127.0.0.1",
      PORT: String(port),
      CHAT_METRICS_PORT: String(metricsPort),
      CHAT_RATE_LIMIT: "false",
      CHAT_LOG_LEVEL: "info",
      ...env,
    },
  });
  return { ...started, port, metricsPort, base: `http://127.0.0.1:${port}` };
}

/** A private PostgreSQL cluster with an empty `chat` database, and that database's URL. */
export async function chatDatabase(): Promise<{ pg: PrivatePostgres; url: string }> {
  const pg = await privatePostgres();
  const admin = new Client({ connectionString: pg.url });
  await admin.connect();
  await admin.query("CREATE DATABASE chat");
  await admin.end();
  return { pg, url: pg.url.replace(/\/postgres$/, "/chat") };
}

/** One answer: status, parsed body, and how long it took. */
export interface Answer {
  status: number;
  body: Record<string, unknown>;
  ms: number;
}

/** An HTTP client with keep-alive connections and no retries; every call gives up after 15 s. */
export function client(base: string) {
  const agent = new Agent({ connections: 32, headersTimeout: 15_000, bodyTimeout: 15_000 });
  return {
    agent,
    call: async (
      method: "GET" | "POST" | "PATCH" | "DELETE",
      path: string,
      options: { auth?: readonly [string, string]; form?: Record<string, string> } = {},
    ): Promise<Answer> => {
      const started = performance.now();
      const headers: Record<string, string> = {};
      if (options.auth !== undefined)
        headers.authorization = `Basic ${Buffer.from(options.auth.join(":")).toString("base64")}`;
      let body: string | undefined;
      if (options.form !== undefined) {
        headers["content-type"] = "application/x-www-form-urlencoded";
        body = new URLSearchParams(options.form).toString();
      }
      const reply = await request(`${base}${path}`, {
        method,
        headers,
        dispatcher: agent,
        ...(body === undefined ? {} : { body }),
      });
      const text = await reply.body.text();
      return {
        status: reply.statusCode,
        body: text === "" ? {} : (JSON.parse(text) as Record<string, unknown>),
        ms: performance.now() - started,
      };
    },
  };
}

/** A demo user's API key (development mode's `dev_fetch_api_key`). */
export async function apiKey(base: string, email: string): Promise<readonly [string, string]> {
  const { call, agent } = client(base);
  try {
    const answer = await call("POST", "/api/v1/dev_fetch_api_key", { form: { username: email } });
    if (answer.status !== 200 || typeof answer.body.api_key !== "string")
      throw new Error(`no key for ${email}: ${answer.status} ${JSON.stringify(answer.body)}`);
    return [email, answer.body.api_key];
  } finally {
    await agent.close();
  }
}
