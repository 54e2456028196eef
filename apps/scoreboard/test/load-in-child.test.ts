import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { PassThrough, type Readable } from "node:stream";
import { until } from "@repo/bench-kit";
import { LoadFailure, type LoadResult } from "../src/snapshot/load";
import { childLoader } from "../src/snapshot/load-in-child";
import { workerLoader } from "../src/snapshot/load-in-worker";
import { LOAD_JOB_VARIABLE, type LoadJob, readReply, writeReply } from "../src/snapshot/load-reply";
import { parseBoard } from "../src/snapshot/parse";
import { fileSource, httpSource } from "../src/snapshot/sources";
import { rows } from "./helpers";

jest.setTimeout(30_000);

const columns = () => parseBoard(Buffer.from(JSON.stringify(rows(7, "ü"))), {});

/** The bytes `writeReply` writes for `reply`. */
async function replyBytes(reply: Parameters<typeof writeReply>[1]): Promise<Buffer> {
  const channel = new PassThrough();
  const chunks: Buffer[] = [];
  channel.on("data", (chunk: Buffer) => chunks.push(chunk));
  await new Promise<void>((resolve) => writeReply(channel, reply, resolve));
  return Buffer.concat(chunks);
}

/** `bytes` read back as `readReply` reads them, split into chunks of `size`. */
function readBack(bytes: Buffer, size = 5): Promise<LoadResult | { kind: string }> {
  const channel = new PassThrough();
  const reading = readReply(channel);
  for (let at = 0; at < bytes.length; at += size) channel.write(bytes.subarray(at, at + size));
  channel.end();
  return reading;
}

describe("the loading process's reply", () => {
  it("carries the columns across whatever the chunks, into one buffer they are views of", async () => {
    const data = { kind: "data" as const, columns: columns(), validators: { etag: '"x"' } };
    const bytes = await replyBytes(data);
    for (const size of [1, 3, 64, bytes.length]) {
      const read = await readBack(bytes, size);
      expect(read).toEqual(data);
      if (read.kind !== "data" || !("columns" in read)) throw new Error("no columns");
      const { offsets, scores, text } = read.columns;
      expect(scores.buffer).toBe(offsets.buffer);
      expect(text.buffer).toBe(offsets.buffer);
    }
  });

  it("carries the outcomes without data and the failures", async () => {
    for (const reply of [
      { kind: "not-modified" as const },
      { kind: "unchanged" as const },
      { kind: "rejected" as const, message: "the board is empty" },
      { kind: "failed" as const, message: "upstream answered HTTP 503" },
    ])
      expect(await readBack(await replyBytes(reply))).toEqual(reply);
  });

  it("is refused when cut short, padded, malformed or missing", async () => {
    const bytes = await replyBytes({ kind: "data", columns: columns(), validators: {} });
    await expect(readBack(bytes.subarray(0, bytes.length - 1))).rejects.toThrow(
      new LoadFailure(
        `the loading process stopped after ${bytes.length - 1 - 4 - bytes.readUInt32BE(0)} of ${bytes.length - 4 - bytes.readUInt32BE(0)} bytes`,
      ),
    );
    await expect(readBack(Buffer.concat([bytes, Buffer.from([0])]))).rejects.toThrow(
      new LoadFailure("the loading process sent more bytes than the header announced"),
    );
    const notJson = Buffer.from("\0\0\0\x02{x");
    await expect(readBack(notJson)).rejects.toThrow(
      new LoadFailure("the loading process sent a header that is not JSON"),
    );
    await expect(readBack(Buffer.from([0, 1, 0, 1]))).rejects.toThrow(
      new LoadFailure("the loading process sent a header of 65537 bytes"),
    );
    await expect(readBack(Buffer.alloc(0))).rejects.toThrow(
      new LoadFailure("the loading process ended without a reply"),
    );
  });
});

describe("the loading process", () => {
  let upstream: http.Server;
  let url: string;
  /** Requests the upstream holds without answering. */
  const held: http.ServerResponse[] = [];

  beforeAll(async () => {
    upstream = http.createServer((_req, res) => held.push(res));
    upstream.listen(0, "127.0.0.1");
    await once(upstream, "listening");
    url = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/board.json`;
  });

  afterAll(() => {
    upstream.closeAllConnections();
    upstream.close();
  });

  /** Resolves once the upstream holds `count` requests. */
  function untilHeld(count: number): Promise<void> {
    return until(() => held.length >= count, 20_000, `the upstream to hold ${String(count)}`, 20);
  }

  /** This process's children that have exited and were not reaped (zombies), by pid. */
  function unreapedChildren(): string[] {
    return readdirSync("/proc")
      .filter((entry) => /^\d+$/.test(entry))
      .filter((pid) => {
        try {
          const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
          const [state, parent] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
          return state === "Z" && Number(parent) === process.pid;
        } catch {
          return false; // gone meanwhile
        }
      });
  }

  it("is reaped before its worker thread ends, whatever the outcome", async () => {
    const before = new Set(unreapedChildren());
    const board = join(mkdtempSync(join(tmpdir(), "board-")), "board.json");
    writeFileSync(board, JSON.stringify(rows(3)));
    for (const source of [fileSource(board), fileSource(`${board}.missing`)])
      await workerLoader(0)(source, {}, 5000).catch(() => undefined);
    // Other suites' processes in this jest worker may exit meanwhile: they are
    // reaped within a turn or two of its event loop. Unreaped loading
    // processes stay zombies for good.
    const left = () => unreapedChildren().filter((pid) => !before.has(pid));
    await until(() => left().length === 0, 2000, "the new unreaped children to be reaped");
  });

  /** This process's children whose command line names `file`. */
  function childrenRunning(file: string): number[] {
    return readdirSync("/proc")
      .filter((entry) => /^\d+$/.test(entry))
      .filter((pid) => {
        try {
          const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
          const parent = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
          return (
            parent === process.pid &&
            readFileSync(`/proc/${pid}/cmdline`, "utf8")
              .split("\0")
              .some((a) => a.endsWith(file))
          );
        } catch {
          return false; // gone meanwhile
        }
      })
      .map(Number);
  }

  it("that dies while loading makes the load fail with how it ended", async () => {
    const before = held.length;
    // Other suites' loads may still be running in this process: the new child is the one to stop.
    const others = new Set(childrenRunning("load-child.ts"));
    const loading = childLoader(0)(httpSource(url), {}, 20_000);
    const failed = expect(loading).rejects.toThrow(
      new LoadFailure("the loading process was stopped by SIGKILL"),
    );
    await untilHeld(before + 1);
    const started = childrenRunning("load-child.ts").filter((pid) => !others.has(pid));
    expect(started).toHaveLength(1);
    process.kill(started[0] ?? 0, "SIGKILL");
    await failed;
  });

  it("stops when the service's end of its channel closes (the service stopped or died)", async () => {
    const before = held.length;
    const job: LoadJob = { source: httpSource(url), since: {}, timeoutMs: 20_000, nice: 0 };
    const child: ChildProcess = spawn(
      process.execPath,
      ["--require", "@swc-node/register", join(__dirname, "../src/snapshot/load-child.ts")],
      {
        env: { ...process.env, [LOAD_JOB_VARIABLE]: JSON.stringify(job) },
        stdio: ["ignore", "inherit", "inherit", "pipe"],
      },
    );
    const exited = once(child, "exit");
    await untilHeld(before + 1); // fetching: it would wait 20 s for the upstream
    (child.stdio[3] as Readable).destroy();
    expect(await exited).toEqual([1, null]);
  });
});
