/**
 * chat-api in a big organization on PostgreSQL (bench/big-realm-data.ts:
 * 10,000 people, 1,000 channels, one of 5,000 members, 200,000 messages):
 * every operation of the URL table called in turn as an administrator (20
 * times each read, 3 times each write), its p50 and p99, any 5xx, and
 * register's size and time. Writes its section of docs/benchmarks.md.
 */
import { join } from "node:path";
import { machine, quantile, table, writeSection } from "@repo/bench-kit";
import { ADMIN_URL, startReplicas } from "./load-realm";
import {
  BIG_CHANNELS,
  BIG_CHANNEL_MEMBERS,
  BIG_MESSAGES,
  BIG_PEOPLE,
  createBigRealm,
  registerCost,
  sweepOperations,
} from "./big-realm-data";

const DOCS = join(__dirname, "../../../docs/benchmarks.md");
const READ_ROUNDS = Number(process.env.BENCH_BIG_READ_ROUNDS ?? 20);
const WRITE_ROUNDS = 3;

async function main(): Promise<void> {
  const startedAt = new Date().toISOString().slice(0, 16).replace("T", " ");
  const filling = performance.now();
  const realm = await createBigRealm(ADMIN_URL);
  const fillSeconds = (performance.now() - filling) / 1000;
  const [server] = await startReplicas(realm.url, 1);
  if (server === undefined) throw new Error("no server");
  try {
    const base = `http://127.0.0.1:${String(server.port)}`;
    const registers = [];
    for (let n = 0; n < 5; n++) registers.push(await registerCost(base, realm));
    const results = await sweepOperations(base, realm, (method) =>
      method === "GET" ? READ_ROUNDS : WRITE_ROUNDS,
    );
    const failed = results.filter((r) => r.statuses.some((s) => s >= 500));
    const ms = (value: number) => value.toFixed(1);
    const rows = results.map((r) => {
      const sorted = [...r.times].sort((a, b) => a - b);
      const counts = new Map<number, number>();
      for (const status of r.statuses) counts.set(status, (counts.get(status) ?? 0) + 1);
      return [
        `\`${r.operation}\``,
        ms(quantile(sorted, 0.5)),
        ms(quantile(sorted, 0.99)),
        [...counts].map(([status, n]) => `${String(status)} x${String(n)}`).join(", "),
      ];
    });
    const registerMs = registers.map((r) => r.ms).sort((a, b) => a - b);
    const report = [
      "## chat-api in a big realm",
      "",
      `Run ${startedAt} with \`pnpm --filter chat-api bench:big-realm\` (part of \`pnpm bench\`) on ${machine([])}, PostgreSQL on the same machine.`,
      "",
      `The realm: ${BIG_PEOPLE.toLocaleString("en")} people, ${BIG_CHANNELS.toLocaleString("en")} channels (one of ${BIG_CHANNEL_MEMBERS.toLocaleString("en")} members), ${BIG_MESSAGES.toLocaleString("en")} messages, filled in ${fillSeconds.toFixed(0)} s. The caller is an administrator subscribed to 20 channels (23,420 messages, half unread). Each read is called ${String(READ_ROUNDS)} times, each write ${String(WRITE_ROUNDS)} times, one call at a time, reads first; the answers' statuses are listed (a 400 is an operation called without the parameters it needs, or refused by its rules: what matters is that none is a 5xx).`,
      "",
      `POST /register (every state type): ${(registers[0]?.bytes ?? 0).toLocaleString("en")} bytes, ${ms(quantile(registerMs, 0.5))} ms median of 5 (${ms(registerMs[0] ?? 0)}-${ms(registerMs.at(-1) ?? 0)}).`,
      "",
      `Operations answering a 5xx: ${failed.length === 0 ? "none" : failed.map((r) => `\`${r.operation}\``).join(", ")}.`,
      "",
      table(["operation", "p50 ms", "p99 ms", "answers"], rows),
    ].join("\n");
    console.log(report);
    writeSection(DOCS, "chat-api-big-realm", report);
    if (failed.length > 0) process.exitCode = 1;
  } finally {
    await server.stop();
    await realm.drop();
  }
}

void main();
