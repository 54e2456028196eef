/**
 * What a change costs one poll, told apart from this machine's drift: two or
 * more chat-api servers run side by side, each with its own environment (a
 * setting on or off), and every user polls them in turn (`dont_block`, an
 * empty queue), so that each process's CPU is measured over the same
 * minute. A round starts fresh servers; the report gives each server's
 * microseconds of CPU per poll, round by round. Servers run one after the
 * other drift by more than a few microseconds between minutes here.
 *
 * BENCH_POLL_PAIR={"name":{"ENV":"value"},...} (default: a write per log
 * line against 4 KiB batches), BENCH_ROUNDS (default 3). A variant's
 * `BENCH_BUILD` is not passed on: it names the build that server runs (a
 * `dist` directory, such as an earlier commit's in a `git worktree` with its
 * own `pnpm install` and build), so that a change is paired with the build
 * before it. A variant's `BENCH_BARE` makes it the bare reference server
 * (bench/poll-reference.ts) instead: `plain` answers with one header, chunked;
 * `same-bytes` with the headers of the first chat-api variant's answers, so
 * that both send the same bytes. A bare variant needs a chat-api one.
 */
import { resolve } from "node:path";
import { type Served, processSeconds } from "@repo/bench-kit";
import { answerHeaders, startBare } from "./poll-cost";
import { createLoadRealm, agent, call, registerMessageQueues, startReplicas } from "./load-realm";

const VARIANTS = JSON.parse(
  process.env.BENCH_POLL_PAIR ??
    '{"a write per log line":{"CHAT_LOG_BUFFER_BYTES":"0"},"4 KiB batches":{}}',
) as Record<string, Record<string, string>>;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const USERS = 50;
const WARMUP = 100;
const POLLS = 600;

async function main(): Promise<void> {
  const data = await createLoadRealm("chat_poll_pair", USERS, 1, () => [0]);
  const results = new Map<string, number[]>();
  try {
    for (let round = 0; round < ROUNDS; round++) {
      const servers: { name: string; server: Served; queues: string[] }[] = [];
      // chat-api's servers first: a bare one may answer with their headers.
      const order = Object.entries(VARIANTS).sort(
        ([, a], [, b]) => Number(a.BENCH_BARE !== undefined) - Number(b.BENCH_BARE !== undefined),
      );
      for (const [name, { BENCH_BUILD: build, BENCH_BARE: bare, ...env }] of order) {
        let server: Served | undefined;
        if (bare === undefined) {
          [server] = await startReplicas(
            data.url,
            1,
            env,
            [],
            build === undefined ? undefined : resolve(build),
          );
        } else {
          const model = servers[0];
          if (model === undefined) throw new Error(`${name}: a bare variant needs a chat-api one`);
          const user = data.users[0];
          if (user === undefined) throw new Error("no user");
          server = await startBare(
            undefined,
            bare === "same-bytes" ? await answerHeaders(model.server.port, user) : undefined,
          );
        }
        if (server === undefined) throw new Error("no server");
        servers.push({
          name,
          server,
          queues: await registerMessageQueues(server.port, data.users, data.users.length),
        });
      }
      const polls = (count: number) =>
        Promise.all(
          data.users.map(async (user, i) => {
            for (let n = 0; n < count; n++)
              for (const { server, queues } of servers) {
                const reply = await call(server.port, user, "GET", "/events", {
                  queue_id: queues[i] ?? "",
                  last_event_id: "-1",
                  dont_block: "true",
                });
                if (reply.status !== 200) throw new Error(`poll: ${String(reply.status)}`);
              }
          }),
        );
      try {
        await polls(WARMUP);
        const before = servers.map(({ server }) => processSeconds(server.child.pid));
        await polls(POLLS);
        for (const [k, { name, server }] of servers.entries()) {
          const micros =
            ((processSeconds(server.child.pid) - (before[k] ?? 0)) * 1e6) / (POLLS * USERS);
          results.set(name, [...(results.get(name) ?? []), micros]);
        }
      } finally {
        for (const { server } of servers) await server.stop();
      }
    }
  } finally {
    await agent.close();
    await data.drop();
  }
  process.stdout.write(
    `CPU per poll (µs), ${String(ROUNDS)} rounds of ${String(POLLS)} polls by ${String(USERS)} users, servers side by side:\n`,
  );
  for (const [name, micros] of results)
    process.stdout.write(`  ${name}: ${micros.map((m) => m.toFixed(1)).join(", ")}\n`);
  // Each chat-api variant against each bare one, round by round (issue 53's target: 1.5x).
  const bare = Object.keys(VARIANTS).filter((name) => VARIANTS[name]?.BENCH_BARE !== undefined);
  for (const [name, micros] of results) {
    if (bare.includes(name)) continue;
    for (const reference of bare) {
      const base = results.get(reference) ?? [];
      const ratios = micros.map((m, r) => `${(m / (base[r] ?? Number.NaN)).toFixed(2)}x`);
      process.stdout.write(`  ${name} / ${reference}: ${ratios.join(", ")}\n`);
    }
  }
}

void main().catch((error: unknown) => {
  process.stderr.write(`${String(error)}\n`);
  process.exit(1);
});
