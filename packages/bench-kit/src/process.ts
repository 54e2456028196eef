import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import net from "node:net";
import { createInterface } from "node:readline";
import { until } from "./wait";

/** A child process serving on `port`. */
export interface Served {
  child: ChildProcess;
  port: number;
  stop: () => Promise<void>;
}

/** A free loopback port. */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const address = server.address();
  server.close();
  if (address === null || typeof address === "string") throw new Error("no port");
  return address.port;
}

/** Whether `port` on loopback accepts a connection now. */
function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, "127.0.0.1", () => {
      socket.destroy();
      resolve(true);
    });
    socket.on("error", () => resolve(false));
  });
}

/** Resolves once `port` accepts a connection; rejects after `timeoutMs`. */
export function waitForPort(port: number, timeoutMs = 60_000): Promise<void> {
  return until(() => accepts(port), timeoutMs, `something to listen on port ${String(port)}`);
}

/** Starts `command args` with `env` added, and waits until it listens on `port`. */
export async function serve(
  command: string,
  args: string[],
  port: number,
  env: Record<string, string> = {},
): Promise<Served> {
  const child = spawn(command, args, {
    env: { ...process.env, ...env },
    stdio: ["ignore", "ignore", "inherit"],
  });
  const exited = new Promise<void>((resolve) => {
    child.once("exit", () => resolve());
    child.once("error", () => resolve());
  });
  await Promise.race([
    waitForPort(port),
    exited.then(() => {
      throw new Error(`${command} ${args.join(" ")} exited before it listened`);
    }),
  ]);
  return {
    child,
    port,
    stop: async () => {
      if (child.exitCode !== null) return;
      child.kill("SIGTERM");
      await exited;
    },
  };
}

/** A service started by {@link startService}. */
export interface StartedService {
  child: ChildProcess;
  /** Every JSON line of its stdout so far, parsed (pino's log records). */
  logs: Record<string, unknown>[];
  /** Resolves with the exit code. */
  exited: Promise<number | null>;
}

/**
 * Starts `node [nodeArgs] script` with `env` added, collects its JSON log lines,
 * and resolves once it listens on `port` (rejects if it exits first).
 */
export async function startService(options: {
  script: string;
  port: number;
  env: Record<string, string>;
  nodeArgs?: string[];
}): Promise<StartedService> {
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), options.script], {
    env: { ...process.env, ...options.env },
    stdio: ["ignore", "pipe", "inherit"],
  });
  const logs: Record<string, unknown>[] = [];
  createInterface({ input: child.stdout }).on("line", (line) => {
    if (line.startsWith("{")) logs.push(JSON.parse(line) as Record<string, unknown>);
  });
  const exited = once(child, "exit").then(([code]) => code as number | null);
  await Promise.race([
    waitForPort(options.port),
    exited.then((code) => {
      throw new Error(`${options.script} exited with ${String(code)} before it listened`);
    }),
  ]);
  return { child, logs, exited };
}

/** Whether a new TCP connection to `port` on loopback is refused (nothing listens). */
export function connectionRefused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, "127.0.0.1");
    socket.once("connect", () => {
      socket.destroy();
      resolve(false);
    });
    socket.once("error", (error: NodeJS.ErrnoException) => resolve(error.code === "ECONNREFUSED"));
  });
}
