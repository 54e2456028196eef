/**
 * Builds a 1,000,000-entry snapshot the way a refresh does (read, parse and
 * index in a process of its own) and reports its build time, the memory it holds and the
 * worst event-loop delay while it builds; the reference in the same run is the
 * same board parsed on the event loop. Run with `pnpm --filter scoreboard bench`.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { parseBoard } from "../src/snapshot/parse";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadInWorker } from "../src/snapshot/load-in-worker";
import { fileSource } from "../src/snapshot/sources";
import { Snapshot } from "../src/snapshot/snapshot";
import { boardCsv } from "./boards";

const SIZE = Number(process.env.BENCH_BOARD_SIZE ?? 1_000_000);

function collect(): number {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) throw new Error("run with node --expose-gc");
  gc();
  gc();
  return process.memoryUsage().heapUsed + process.memoryUsage().arrayBuffers;
}

/** Runs `build`, sampling the event loop every millisecond; returns ms taken and worst delay. */
async function measure<T>(
  build: () => Promise<T>,
): Promise<{ value: T; ms: number; worstDelayMs: number }> {
  const histogram = monitorEventLoopDelay({ resolution: 1 });
  let worst = 0;
  let last = performance.now();
  const ticker = setInterval(() => {
    const now = performance.now();
    worst = Math.max(worst, now - last - 1);
    last = now;
  }, 1);
  histogram.enable();
  const started = performance.now();
  const value = await build();
  const ms = performance.now() - started;
  // Let the sampler run once more, so a build that blocked the loop to the end is seen.
  await sleep(5);
  histogram.disable();
  clearInterval(ticker);
  return { value, ms, worstDelayMs: Math.max(worst, histogram.max / 1e6) };
}

async function main(): Promise<void> {
  const bytes = boardCsv(SIZE);
  const folder = mkdtempSync(join(tmpdir(), "bench-board-"));
  const file = (name: string, content: Buffer | string) => {
    writeFileSync(join(folder, name), content);
    return fileSource(join(folder, name));
  };
  const board = file("b.csv", bytes);
  /** Loads `source` as a refresh does (a worker thread and a loading process). */
  const load = async (source: ReturnType<typeof fileSource>) => {
    const result = await loadInWorker(source, {}, 60_000);
    if (result.kind !== "data") throw new Error("a file source is never 'not modified'");
    return result.columns;
  };
  // Warm-up: the first load pays for module loading.
  await load(file("tiny.csv", "username,profile_path,country,grade,score\na,/a,,A,1\n"));
  const before = collect();
  const ours = await measure(async () => Snapshot.build(await load(board), 1n));
  // The heap it added, and the columns' own bytes (an array buffer outside the
  // heap, which process.memoryUsage().heapUsed does not count).
  const { columns } = ours.value.data;
  const held =
    collect() -
    before +
    [columns.text, columns.offsets, columns.scores, columns.foldHashes, columns.foldOrder].reduce(
      (sum, array) => sum + array.byteLength,
      0,
    );
  const reference = await measure(async () =>
    Snapshot.build(parseBoard(bytes, { path: "b.csv" }), 1n),
  );
  const mib = (n: number) => (n / 1024 / 1024).toFixed(1);
  process.stdout.write(
    [
      `board: ${SIZE} entries, ${mib(bytes.length)} MiB of CSV`,
      `snapshot memory held: ${mib(held)} MiB (${(held / SIZE).toFixed(0)} bytes/entry)`,
      `build (read, parse and index in the loading process): ${ours.ms.toFixed(0)} ms, worst event-loop delay ${ours.worstDelayMs.toFixed(1)} ms`,
      `reference (parse and index on the event loop): ${reference.ms.toFixed(0)} ms, worst event-loop delay ${reference.worstDelayMs.toFixed(1)} ms`,
      `ratio of worst delays, ours / reference: ${(ours.worstDelayMs / reference.worstDelayMs).toFixed(3)}`,
      `snapshot kept: ${ours.value.total} entries`,
      "",
    ].join("\n"),
  );
}

void main();
