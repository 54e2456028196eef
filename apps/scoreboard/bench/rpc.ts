/**
 * The scoreboard's calls under load, against references measured in the same
 * run: an @grpc/grpc-js server answering the same RPCs from the same board
 * (bench/grpc-js-reference.ts) and a bare node:http2 handler returning the
 * service's own reply bytes (bench/h2-ceiling.ts, the ceiling of this runtime).
 * Load comes from h2load in another process over loopback. Then a refresh of a
 * 1,000,000-entry board under a steady read load: event-loop delay and read
 * latency while it builds. Writes its section of docs/benchmarks.md.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { mkdtempSync, writeFileSync } from "node:fs";
import http from "node:http";
import http2 from "node:http2";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import {
  type LoadResult,
  type Served,
  freePort,
  h2load,
  pairedCpus,
  pinToCpus,
  processSeconds,
  machine,
  serve,
  summarize,
  table,
  windowed,
  until,
  writeSection,
  ensureH2load,
} from "@repo/bench-kit";
import {
  GetByRankRequestSchema,
  GetByUsernameRequestSchema,
  ListScoreboardRequestSchema,
  ListScoreboardResponseSchema,
} from "@repo/proto-gen/scoreboard/v1";
import { NODE_FLAGS } from "../src/node-flags";
import { boardCsv, usernameOf } from "./boards";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
/** BENCH_CASES=name,name: only these calls (their names as in the table), printed and not written to the report. */
const ONLY = process.env.BENCH_CASES?.split(",").map((name) => name.trim());
const SECONDS = Number(process.env.BENCH_SECONDS ?? 4);
const LOAD = { connections: 4, streams: 10, seconds: SECONDS, warmUpSeconds: 1 };
const PATH = "/scoreboard.v1.ScoreboardService/";
const GRPC_HEADERS = { "content-type": "application/grpc", te: "trailers" };
const TS = ["--conditions=@repo/source", "--require", "@swc-node/register"];
const DOCS = join(__dirname, "../../../docs/benchmarks.md");

type Target = "ours" | "grpc-js" | "ceiling";
interface Case {
  name: string;
  board: "100k" | "10k";
  method: string;
  message: Uint8Array;
  /** Connect GET instead of gRPC (ours only). */
  connectGet?: boolean;
  /** With the ETag of the answer in If-None-Match: a cache's revalidation (304). */
  revalidate?: boolean;
}

const RANK = 4242;
const CASES: Case[] = [
  {
    name: "GetByRank",
    board: "100k",
    method: "GetByRank",
    message: toBinary(GetByRankRequestSchema, create(GetByRankRequestSchema, { rank: RANK })),
  },
  {
    name: "GetByUsername",
    board: "100k",
    method: "GetByUsername",
    message: toBinary(
      GetByUsernameRequestSchema,
      create(GetByUsernameRequestSchema, { username: usernameOf(RANK).toUpperCase() }),
    ),
  },
  {
    name: "ListScoreboard limit 100",
    board: "100k",
    method: "ListScoreboard",
    message: toBinary(
      ListScoreboardRequestSchema,
      create(ListScoreboardRequestSchema, { offset: 5000, limit: 100 }),
    ),
  },
  {
    name: "ListScoreboard limit 0 (10,000 entries)",
    board: "10k",
    method: "ListScoreboard",
    message: toBinary(ListScoreboardRequestSchema, create(ListScoreboardRequestSchema, {})),
  },
  {
    name: "GetByRank, Connect GET",
    board: "100k",
    method: "GetByRank",
    message: toBinary(GetByRankRequestSchema, create(GetByRankRequestSchema, { rank: RANK })),
    connectGet: true,
  },
  {
    name: "GetByRank, Connect GET revalidated (304)",
    board: "100k",
    method: "GetByRank",
    message: toBinary(GetByRankRequestSchema, create(GetByRankRequestSchema, { rank: RANK })),
    connectGet: true,
    revalidate: true,
  },
];

function framed(message: Uint8Array): Buffer {
  const frame = Buffer.alloc(5 + message.length);
  frame.writeUInt32BE(message.length, 1);
  frame.set(message, 5);
  return frame;
}

/** One gRPC call over a fresh h2c session: the reply message and grpc-status. */
async function grpcCall(
  port: number,
  method: string,
  message: Uint8Array,
): Promise<{ status: string; reply: Buffer }> {
  const session = http2.connect(`http://127.0.0.1:${port}`);
  try {
    return await new Promise((resolve, reject) => {
      const stream = session.request({
        ":method": "POST",
        ":path": PATH + method,
        ...GRPC_HEADERS,
      });
      const chunks: Buffer[] = [];
      let status = "";
      stream.on("data", (chunk: Buffer) => chunks.push(chunk));
      stream.on("trailers", (trailers: http2.IncomingHttpHeaders) => {
        status = String(trailers["grpc-status"]);
      });
      stream.on("end", () => {
        const body = Buffer.concat(chunks);
        resolve({
          status,
          reply: body.subarray(5, 5 + (body.length >= 5 ? body.readUInt32BE(1) : 0)),
        });
      });
      stream.on("error", reject);
      stream.end(framed(message));
    });
  } finally {
    session.close();
  }
}

/** Waits until the service at `port` answers GetByRank(1): its board is loaded. */
function untilLoaded(port: number, timeoutMs = 120_000): Promise<void> {
  const probe = toBinary(GetByRankRequestSchema, create(GetByRankRequestSchema, { rank: 1 }));
  return until(
    async () => (await grpcCall(port, "GetByRank", probe)).status === "0",
    timeoutMs,
    `the service on ${String(port)} to load its board`,
    200,
  );
}

/** The service (built, as `pnpm start` runs it) over `source`. */
async function startOurs(source: string, env: Record<string, string> = {}): Promise<Served> {
  const port = await freePort();
  // BENCH_CPU_PROF=DIR: the service writes a V8 CPU profile there when it stops.
  const profile = process.env.BENCH_CPU_PROF;
  const args = profile === undefined ? [] : ["--cpu-prof", `--cpu-prof-dir=${profile}`];
  const served = await serve(process.execPath, [...NODE_FLAGS, ...args, "dist/index.js"], port, {
    SCOREBOARD_PORT: String(port),
    SCOREBOARD_METRICS_PORT: String(await freePort()),
    SCOREBOARD_HOST: "127.0.0.1",
    SCOREBOARD_SOURCE: source,
    SCOREBOARD_LOG_LEVEL: "warn",
    ...env,
  });
  await untilLoaded(port);
  return served;
}

async function startGrpcJs(file: string): Promise<Served> {
  const port = await freePort();
  return serve(process.execPath, [...TS, "bench/grpc-js-reference.ts", String(port), file], port);
}

async function startCeiling(reply: Buffer): Promise<Served> {
  const port = await freePort();
  const file = join(mkdtempSync(join(tmpdir(), "ceiling-")), "reply.bin");
  writeFileSync(file, reply);
  return serve(process.execPath, [...TS, "bench/h2-ceiling.ts", String(port), file], port);
}

/** Both implementations must give the same answer before their speeds mean anything. */
function sameAnswer(c: Case, ours: Buffer, reference: Buffer): boolean {
  if (c.method !== "ListScoreboard") return ours.equals(reference);
  const [a, b] = [
    fromBinary(ListScoreboardResponseSchema, ours),
    fromBinary(ListScoreboardResponseSchema, reference),
  ];
  return a.total === b.total && JSON.stringify(a.entries) === JSON.stringify(b.entries); // fetched_at differs
}

async function load(port: number, c: Case, cpus?: string): Promise<LoadResult> {
  if (c.connectGet === true) {
    const query = new URLSearchParams({
      connect: "v1",
      encoding: "proto",
      base64: "1",
      message: Buffer.from(c.message).toString("base64url"),
    });
    const url = `http://127.0.0.1:${port}${PATH}${c.method}?${query.toString()}`;
    const etag = c.revalidate === true ? (await fetch(url)).headers.get("etag") : null;
    return h2load({
      ...LOAD,
      url,
      ...(etag === null ? {} : { headers: { "if-none-match": etag }, okStatus: "3xx" as const }),
      ...(cpus === undefined ? {} : { cpus }),
    });
  }
  return h2load({
    ...LOAD,
    url: `http://127.0.0.1:${port}${PATH}${c.method}`,
    body: framed(c.message),
    headers: GRPC_HEADERS,
    ...(cpus === undefined ? {} : { cpus }),
  });
}

const median = (values: number[]) => summarize(values).median;

/** A paired comparison: the median of the rounds' ratios, then each round's. */
interface Paired {
  ratio: number;
  rounds: number[];
}

/**
 * Ours against `reference` at the same moment: both servers pinned to one
 * shared CPU, each loaded by its own h2load on the other CPUs, round after
 * round. Each round gives two ratios: of requests/s, which is the ratio of the
 * two servers' CPU costs per call when the kernel gives both the same share of
 * the CPU; and of calls per CPU second, each server's calls over the CPU time
 * its process got in the round, which does not assume that (a process whose
 * collector runs on helper threads gets more of the shared CPU while they
 * run). The median of each over the rounds. Undefined on a one-CPU machine.
 */
async function pairedRatio(
  c: Case,
  ours: Served,
  reference: Served,
): Promise<{ perSecond: Paired; perCpuSecond: Paired } | undefined> {
  const cpus = pairedCpus();
  if (cpus === undefined) return undefined;
  for (const served of [ours, reference])
    if (served.child.pid !== undefined) await pinToCpus(served.child.pid, cpus.servers);
  const rounds: number[] = [];
  const perCpu: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const [mineBefore, theirsBefore] = [
      processSeconds(ours.child.pid),
      processSeconds(reference.child.pid),
    ];
    const [mine, theirs] = await Promise.all([
      load(ours.port, c, cpus.load),
      load(reference.port, c, cpus.load),
    ]);
    const spentMine = processSeconds(ours.child.pid) - mineBefore;
    const spentTheirs = processSeconds(reference.child.pid) - theirsBefore;
    if (mine.failures + theirs.failures > 0)
      throw new Error(`${c.name}: failed requests while paired`);
    rounds.push(mine.requestsPerSecond / theirs.requestsPerSecond);
    // Both loads last as long, so their calls are in the ratio of their rates.
    perCpu.push(mine.requestsPerSecond / spentMine / (theirs.requestsPerSecond / spentTheirs));
  }
  return {
    perSecond: { ratio: median(rounds), rounds },
    perCpuSecond: { ratio: median(perCpu), rounds: perCpu },
  };
}

const fmt = (n: number, digits = 0) =>
  n.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });

async function throughput(dir: string): Promise<string> {
  const files = { "100k": join(dir, "board-100k.csv"), "10k": join(dir, "board-10k.csv") };
  writeFileSync(files["100k"], boardCsv(100_000));
  writeFileSync(files["10k"], boardCsv(10_000));
  const rows: string[][] = [];
  const ratios: string[] = [];
  const gRpcRank: Record<string, number> = {};
  const pairedRows: string[][] = [];
  for (const c of CASES.filter((k) => ONLY === undefined || ONLY.includes(k.name))) {
    const ours = await startOurs(files[c.board]);
    const reference = await startGrpcJs(files[c.board]);
    const mine = await grpcCall(ours.port, c.method, c.message);
    const theirs = await grpcCall(reference.port, c.method, c.message);
    if (mine.status !== "0" || theirs.status !== "0" || !sameAnswer(c, mine.reply, theirs.reply))
      throw new Error(`${c.name}: the service and the grpc-js reference disagree`);
    const ceiling = await startCeiling(mine.reply);
    const targets: Record<Target, Served | undefined> = {
      ours,
      "grpc-js": c.connectGet === true ? undefined : reference,
      ceiling: c.connectGet === true ? undefined : ceiling,
    };
    const results: Record<Target, LoadResult[]> = { ours: [], "grpc-js": [], ceiling: [] };
    /** Each target's CPU per call (µs) in each round: its process's CPU over the calls it answered. */
    const cpu: Record<Target, number[]> = { ours: [], "grpc-js": [], ceiling: [] };
    for (let round = 0; round < ROUNDS; round++) {
      for (const target of ["ours", "grpc-js", "ceiling"] as const) {
        const served = targets[target];
        if (served === undefined) continue;
        const before = processSeconds(served.child.pid);
        const result = await load(served.port, c);
        const spent = processSeconds(served.child.pid) - before;
        if (result.failures > 0)
          throw new Error(`${c.name} on ${target}: ${result.failures} failed requests`);
        results[target].push(result);
        // The warm-up's calls count too: h2load's rate over the whole load.
        const calls = result.requestsPerSecond * (LOAD.seconds + LOAD.warmUpSeconds);
        cpu[target].push((spent * 1e6) / calls);
      }
    }
    // Then the same calls paired, at the same moment on one shared CPU (gRPC cases only).
    const paired =
      c.connectGet === true
        ? undefined
        : {
            grpcJs: await pairedRatio(c, ours, reference),
            ceiling: await pairedRatio(c, ours, ceiling),
          };
    await Promise.all([ours.stop(), reference.stop(), ceiling.stop()]);
    const medianOf = (target: Target) => median(results[target].map((r) => r.requestsPerSecond));
    for (const target of ["ours", "grpc-js", "ceiling"] as const) {
      if (results[target].length === 0) continue;
      const rps = summarize(results[target].map((r) => r.requestsPerSecond));
      const p50 = summarize(results[target].map((r) => r.p50Ms)).median;
      const p99 = summarize(results[target].map((r) => r.p99Ms)).median;
      rows.push([
        c.name,
        target,
        fmt(rps.median),
        `${fmt(rps.spread * 100, 1)} %`,
        fmt(p50, 2),
        fmt(p99, 2),
        fmt(summarize(cpu[target]).median, 1),
      ]);
    }
    if (c.connectGet === true) {
      const [rank, theirs] = [gRpcRank.ours ?? Number.NaN, gRpcRank["grpc-js"] ?? Number.NaN];
      ratios.push(
        `- ${c.name}: ${fmt(medianOf("ours") / theirs, 2)}x grpc-js's gRPC GetByRank, ${fmt(medianOf("ours") / rank, 2)}x our gRPC GetByRank`,
      );
    } else {
      if (c.name === "GetByRank") {
        gRpcRank.ours = medianOf("ours");
        gRpcRank["grpc-js"] = medianOf("grpc-js");
      }
      ratios.push(
        `- ${c.name}: ${fmt(medianOf("ours") / medianOf("grpc-js"), 2)}x grpc-js, ${fmt(medianOf("ours") / medianOf("ceiling"), 2)}x the bare http2 ceiling`,
      );
      if (paired?.grpcJs !== undefined && paired.ceiling !== undefined) {
        const cells = (p: Paired) => [
          `**${fmt(p.ratio, 2)}x**`,
          p.rounds.map((r) => fmt(r, 2)).join(", "),
        ];
        pairedRows.push(
          [
            c.name,
            "requests/s",
            ...cells(paired.grpcJs.perSecond),
            ...cells(paired.ceiling.perSecond),
          ],
          [
            c.name,
            "calls per CPU second",
            ...cells(paired.grpcJs.perCpuSecond),
            ...cells(paired.ceiling.perCpuSecond),
          ],
        );
      }
    }
  }
  const pairedCpuList = pairedCpus();
  return [
    table(
      ["call", "server", "requests/s (median)", "spread", "p50 ms", "p99 ms", "CPU µs per call"],
      rows,
    ),
    "",
    "Ratios of the medians, ours over the reference:",
    "",
    ...ratios,
    "",
    pairedCpuList === undefined
      ? "Paired ratios: not measured (one CPU)."
      : `Paired ratios, ours over the reference loaded at the same moment, both servers pinned to CPU ${pairedCpuList.servers} and each h2load to CPU ${pairedCpuList.load} (${String(ROUNDS)} rounds; the median of the rounds' ratios, then each round's): of requests/s, and of calls per second of the CPU time each process got in the round:`,
    "",
    ...(pairedRows.length === 0
      ? []
      : [
          table(
            ["call", "ratio of", "vs grpc-js", "rounds", "vs the bare http2 ceiling", "rounds"],
            pairedRows,
          ),
        ]),
  ].join("\n");
}

/** Scrapes one gauge or counter sample from a Prometheus text page. */
function sample(page: string, name: string): number {
  const line = page.split("\n").find((l) => l.startsWith(name));
  return Number(line?.slice(line.lastIndexOf(" ") + 1) ?? Number.NaN);
}

async function refreshUnderLoad(): Promise<string> {
  const size = 1_000_000;
  const csv = boardCsv(size);
  const fetches: number[] = [];
  const files = http.createServer((_, res) => {
    fetches.push(Date.now());
    res.writeHead(200, { "content-type": "text/csv", "cache-control": "no-store" });
    res.end(csv);
  });
  const filePort = await freePort();
  files.listen(filePort, "127.0.0.1");
  const metricsPort = await freePort();
  const ours = await startOurs(`http://127.0.0.1:${filePort}/board.csv`, {
    SCOREBOARD_REFRESH_SECONDS: "12",
    SCOREBOARD_FETCH_TIMEOUT_SECONDS: "60",
    SCOREBOARD_METRICS_PORT: String(metricsPort),
  });
  const polls: { at: number; lagMax: number; lagP99: number; updated: number }[] = [];
  const polling = { on: true };
  const poller = (async () => {
    while (polling.on) {
      const page = await fetch(`http://127.0.0.1:${metricsPort}/metrics`).then((r) => r.text());
      polls.push({
        at: Date.now(),
        lagMax: sample(page, "nodejs_eventloop_lag_max_seconds") * 1000,
        lagP99: sample(page, "nodejs_eventloop_lag_p99_seconds") * 1000,
        updated: sample(page, 'scoreboard_snapshot_refreshes_total{outcome="updated"}'),
      });
      await sleep(250);
    }
  })();
  const started = Date.now();
  const message = CASES[0]?.message ?? new Uint8Array();
  const reads = await h2load({
    url: `http://127.0.0.1:${ours.port}${PATH}GetByRank`,
    body: framed(message),
    headers: GRPC_HEADERS,
    seconds: 40,
    warmUpSeconds: 0,
    connections: 4,
    streams: 1,
    rate: 250,
  });
  polling.on = false;
  await poller;
  await ours.stop();
  files.close();
  // Build windows: from each fetch to the first poll that saw the swap.
  const builds = fetches
    .filter((at) => at > started)
    .map((from) => {
      const before = polls.filter((p) => p.at <= from).at(-1)?.updated ?? 0;
      const to = polls.find((p) => p.at > from && p.updated > before)?.at;
      return { from, to };
    })
    .filter((b): b is { from: number; to: number } => b.to !== undefined);
  if (builds.length === 0) throw new Error("no refresh completed during the read load");
  const inBuild = (at: number) => builds.some((b) => at >= b.from && at < b.to);
  const during = builds.map((b) => windowed(reads.samples, b.from, b.to));
  const duringP99 = Math.max(...during.map((d) => d.p99Ms));
  const quiet = reads.samples.filter((s) => !inBuild(s.startMs) && s.startMs > started + 2000);
  const quietWindow = windowed(quiet, 0, Number.MAX_SAFE_INTEGER);
  const buildPolls = polls.filter((p) => builds.some((b) => p.at > b.from && p.at <= b.to + 250));
  const lagMax = Math.max(...buildPolls.map((p) => p.lagMax));
  const lagP99 = Math.max(...buildPolls.map((p) => p.lagP99));
  const buildSeconds = builds.map((b) => ((b.to - b.from) / 1000).toFixed(1)).join(", ");
  return [
    `A ${fmt(size)}-entry board (${fmt(csv.length / 2 ** 20, 1)} MiB of CSV) refreshed from a local HTTP source every 12 s while h2load reads GetByRank at 1,000 calls/s for 40 s (${fmt(reads.samples.length)} calls, ${reads.failures} failed).`,
    "",
    table(
      ["figure", "value"],
      [
        ["refreshes measured (fetch to swap, s)", `${builds.length} (${buildSeconds})`],
        ["event-loop delay during a build, p99 (worst 250 ms window)", `${fmt(lagP99, 1)} ms`],
        ["event-loop delay during a build, max", `${fmt(lagMax, 1)} ms`],
        [
          "read p99 outside builds",
          `${fmt(quietWindow.p99Ms, 2)} ms (${fmt(quietWindow.count)} calls)`,
        ],
        [
          "read p99 during builds",
          `${fmt(duringP99, 2)} ms (${fmt(during.reduce((n, d) => n + d.count, 0))} calls)`,
        ],
        ["ratio, during / outside", `${fmt(duringP99 / quietWindow.p99Ms, 2)}x`],
      ],
    ),
  ].join("\n");
}

/** `BENCH_PARTS=calls` or `=refresh` runs one part; the report keeps the other part's last figures. */
const PARTS = new Set((process.env.BENCH_PARTS ?? "calls,refresh").split(","));

async function main(): Promise<void> {
  await ensureH2load();
  const dir = mkdtempSync(join(tmpdir(), "scoreboard-bench-"));
  const startedAt = new Date().toISOString();
  const where = `Run ${startedAt} with \`pnpm bench\` (\`pnpm --filter scoreboard bench\` for this part alone) on ${machine()}.`;
  if (PARTS.has("calls")) {
    const calls = await throughput(dir);
    process.stdout.write(`${calls}\n\n`);
    // A run of some calls only (BENCH_CASES) is printed, not written over the report.
    if (ONLY === undefined)
      writeSection(
        DOCS,
        "scoreboard-calls",
        [
          "## scoreboard: calls",
          "",
          where,
          `Each call: ${ROUNDS} rounds of ${SECONDS} s (after 1 s of warm-up) per server, servers taking turns; h2load with ${LOAD.connections} connections x ${LOAD.streams} streams, one thread. Spread = (max - min) / median of the rounds' requests/s. Then, for the gRPC calls, ${ROUNDS} paired rounds against each reference (see "Paired rounds" above).`,
          "",
          calls,
        ].join("\n"),
      );
  }
  if (PARTS.has("refresh")) {
    const refresh = await refreshUnderLoad();
    process.stdout.write(`${refresh}\n`);
    writeSection(
      DOCS,
      "scoreboard-refresh",
      ["## scoreboard: a 1,000,000-entry refresh under read load", "", where, "", refresh].join(
        "\n",
      ),
    );
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? String(error.stack) : String(error)}\n`);
  process.exit(1);
});
