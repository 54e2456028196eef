import { execFile } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { freePort } from "./process";

const run = promisify(execFile);

/**
 * A PostgreSQL cluster of a test's own: its own data directory and port, run
 * as the `postgres` user (PostgreSQL refuses root), never the machine's shared
 * cluster, so a test may stop and start it at will.
 */
export interface PrivatePostgres {
  /** `postgresql://postgres@127.0.0.1:PORT/postgres`. */
  url: string;
  port: number;
  /** Stops the server (`pg_ctl stop -m fast`: connections are cut at once). */
  stop(): Promise<void>;
  /** Starts it again on the same port and data. */
  start(): Promise<void>;
  /** Stops it and deletes its files. */
  destroy(): Promise<void>;
}

/** The newest PostgreSQL server binaries installed the Debian way. */
function binDir(): string {
  const root = "/usr/lib/postgresql";
  const versions = existsSync(root)
    ? readdirSync(root)
        .filter((v) => existsSync(join(root, v, "bin", "initdb")))
        .sort((a, b) => Number(a) - Number(b))
    : [];
  const newest = versions.at(-1);
  if (newest === undefined) throw new Error(`no PostgreSQL server binaries under ${root}`);
  return join(root, newest, "bin");
}

/** Creates and starts a private cluster (trust authentication on 127.0.0.1). */
export async function privatePostgres(): Promise<PrivatePostgres> {
  const bin = binDir();
  const dir = mkdtempSync(join(tmpdir(), "private-pg-"));
  const data = join(dir, "data");
  const { uid, gid } = await postgresUser();
  chownSync(dir, uid, gid);
  const asPostgres = (command: string, args: string[]) =>
    run("runuser", ["-u", "postgres", "--", join(bin, command), ...args], { cwd: dir });
  await asPostgres("initdb", ["-D", data, "-A", "trust", "-U", "postgres", "--no-sync"]);
  const port = await freePort();
  const options = [
    `-p ${port}`,
    "-c listen_addresses=127.0.0.1",
    `-c unix_socket_directories=${dir}`,
    "-c fsync=off",
    "-c max_connections=100",
  ].join(" ");
  const start = async () => {
    await asPostgres("pg_ctl", [
      "start",
      "-w",
      "-t",
      "60",
      "-D",
      data,
      "-l",
      join(dir, "log"),
      "-o",
      options,
    ]);
  };
  const stop = async () => {
    await asPostgres("pg_ctl", ["stop", "-w", "-t", "60", "-D", data, "-m", "fast"]);
  };
  await start();
  let running = true;
  return {
    url: `postgresql://postgres@127.0.0.1:${port}/postgres`,
    port,
    async stop() {
      await stop();
      running = false;
    },
    async start() {
      await start();
      running = true;
    },
    async destroy() {
      if (running) await stop().catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function postgresUser(): Promise<{ uid: number; gid: number }> {
  const [uid, gid] = await Promise.all(
    ["-u", "-g"].map(async (flag) => Number((await run("id", [flag, "postgres"])).stdout.trim())),
  );
  if (uid === undefined || gid === undefined || Number.isNaN(uid) || Number.isNaN(gid))
    throw new Error("there is no postgres user");
  return { uid, gid };
}
