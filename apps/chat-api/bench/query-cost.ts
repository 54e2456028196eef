/**
 * What one query costs chat-api's process in CPU, by the way it is sent: Prisma's
 * query builder (as the service uses it, over a `pg` pool through
 * `@prisma/adapter-pg`), Kysely's query builder over a `pg` pool, and `pg` with the
 * statement's text. The same statements on the same PostgreSQL in the same run,
 * sent one after another; each way's results are compared with `pg`'s before
 * any timing. Issue 24 asks for this measurement before a typed query layer is
 * chosen. Run with `pnpm --filter chat-api bench:queries`.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { machine, summarize, table, toolVersion, writeSection } from "@repo/bench-kit";
import { Kysely, PostgresDialect } from "kysely";
import { Client, Pool } from "pg";
import { isDeepStrictEqual } from "node:util";
import { createDatabase } from "../src/db/database";
import { kyselyOver } from "../src/db/kysely";
import { migrate } from "../src/db/migrate";
import { seedDemoRealm } from "../src/cli/demo-data";

const ADMIN_URL = process.env.BENCH_DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";
const DOCS = join(__dirname, "../../../docs/benchmarks.md");
/** Kysely's version (its package.json is not among its exports: read beside its entry point). */
const KYSELY_VERSION = (
  JSON.parse(readFileSync(join(require.resolve("kysely"), "../../../package.json"), "utf8")) as {
    version: string;
  }
).version;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const QUERIES = Number(process.env.BENCH_QUERIES ?? 2000);

/** The tables the cases read, as prisma-kysely would generate them from schema.prisma. */
interface Tables {
  users: {
    id: number;
    realm_id: number;
    email: string;
    full_name: string;
    role: number;
    is_active: boolean;
    api_key: string;
  };
}

type Way = "Prisma" | "Kysely" | "chat-api's db.q" | "pg";
interface Case {
  name: string;
  ways: Record<Way, () => Promise<unknown>>;
}

/** CPU (user + system) and wall time per call of `call`, in microseconds, over `n` calls one after another. */
async function perCall(
  call: () => Promise<unknown>,
  n: number,
): Promise<{ cpu: number; wall: number }> {
  const cpu = process.cpuUsage();
  const started = process.hrtime.bigint();
  for (let i = 0; i < n; i++) await call();
  const wall = Number(process.hrtime.bigint() - started) / 1000;
  const used = process.cpuUsage(cpu);
  return { cpu: (used.user + used.system) / n, wall: wall / n };
}

async function main(): Promise<void> {
  const name = `chat_qcost_${Date.now()}`;
  const admin = new Client({ connectionString: ADMIN_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  const db = await createDatabase({ kind: "postgres", url: url.href });
  const pool = new Pool({ connectionString: url.href, max: 10 });
  const kysely = new Kysely<Tables>({ dialect: new PostgresDialect({ pool }) });
  // chat-api's data layer (src/db/kysely.ts): Kysely over the service's own driver
  // (the pool Prisma's adapter uses), a builder made per call as a transaction makes its own.
  const viaService = () => kyselyOver(db.sql);
  try {
    await migrate(db.sql);
    await seedDemoRealm(db);
    const hamlet = await db.prisma.user.findFirstOrThrow({
      where: { email: "hamlet@example.com" },
    });
    const key = hamlet.api_key;
    const realmId = hamlet.realm_id;

    const cases: Case[] = [
      {
        name: "a user by API key (one row, 5 columns)",
        ways: {
          Prisma: () =>
            db.prisma.user.findFirst({
              where: { api_key: key },
              select: { id: true, realm_id: true, email: true, role: true, is_active: true },
            }),
          Kysely: () =>
            kysely
              .selectFrom("users")
              .select(["id", "realm_id", "email", "role", "is_active"])
              .where("api_key", "=", key)
              .executeTakeFirst(),
          "chat-api's db.q": () =>
            viaService()
              .selectFrom("users")
              .select(["id", "realm_id", "email", "role", "is_active"])
              .where("api_key", "=", key)
              .executeTakeFirst(),
          pg: async () =>
            (
              await pool.query(
                "SELECT id, realm_id, email, role, is_active FROM users WHERE api_key = $1",
                [key],
              )
            ).rows[0] as unknown,
        },
      },
      {
        name: "a realm's users by id (every row of the demo realm, 4 columns)",
        ways: {
          Prisma: () =>
            db.prisma.user.findMany({
              where: { realm_id: realmId },
              orderBy: { id: "asc" },
              select: { id: true, email: true, full_name: true, role: true },
            }),
          Kysely: () =>
            kysely
              .selectFrom("users")
              .select(["id", "email", "full_name", "role"])
              .where("realm_id", "=", realmId)
              .orderBy("id")
              .execute(),
          "chat-api's db.q": () =>
            viaService()
              .selectFrom("users")
              .select(["id", "email", "full_name", "role"])
              .where("realm_id", "=", realmId)
              .orderBy("id")
              .execute(),
          pg: async () =>
            (
              await pool.query(
                "SELECT id, email, full_name, role FROM users WHERE realm_id = $1 ORDER BY id",
                [realmId],
              )
            ).rows as unknown,
        },
      },
    ];

    const rows: string[][] = [];
    for (const c of cases) {
      // The same answer every way, before any timing.
      const reference = await c.ways.pg();
      for (const way of ["Prisma", "Kysely", "chat-api's db.q"] as const) {
        const got = await c.ways[way]();
        if (!isDeepStrictEqual({ ...(got as object) }, { ...(reference as object) }))
          throw new Error(
            `${c.name}: ${way} answered ${JSON.stringify(got)}, pg ${JSON.stringify(reference)}`,
          );
      }
      const ways = Object.keys(c.ways) as Way[];
      // Warm-up: each way's code paths compiled before the rounds.
      for (const way of ways) await perCall(c.ways[way], 500);
      const measured = new Map<Way, { cpu: number[]; wall: number[] }>(
        ways.map((w) => [w, { cpu: [], wall: [] }]),
      );
      for (let round = 0; round < ROUNDS; round++) {
        for (const way of ways) {
          const { cpu, wall } = await perCall(c.ways[way], QUERIES);
          measured.get(way)?.cpu.push(cpu);
          measured.get(way)?.wall.push(wall);
        }
      }
      const pgCpu = summarize(measured.get("pg")?.cpu ?? []).median;
      for (const way of ways) {
        const cpu = summarize(measured.get(way)?.cpu ?? []);
        const wall = summarize(measured.get(way)?.wall ?? []);
        rows.push([
          c.name,
          way,
          cpu.median.toFixed(0),
          `${(cpu.spread * 100).toFixed(1)} %`,
          wall.median.toFixed(0),
          `${(cpu.median / pgCpu).toFixed(2)}x`,
        ]);
      }
    }
    const report = [
      "## chat-api: what a query costs, by the way it is sent",
      "",
      `Run ${new Date().toISOString()} with \`pnpm --filter chat-api bench:queries\` on ${machine([toolVersion("psql", ["--version"])])}.`,
      `Each way: ${QUERIES.toLocaleString("en-US")} queries one after another, ${ROUNDS} rounds, ways taking turns, after 500 of warm-up; CPU is this process's (user + system) per query, wall the time per query; Spread = (max - min) / median of the rounds' CPU. Prisma ${toolVersion("node", ["-p", "require('@prisma/client/package.json').version"])}, Kysely ${KYSELY_VERSION}, pg over a pool of 10; the demo realm on PostgreSQL (\`bench/query-cost.ts\`).`,
      "",
      table(
        [
          "query",
          "sent through",
          "CPU us / query (median)",
          "spread",
          "wall us / query",
          "CPU vs pg",
        ],
        rows,
      ),
    ].join("\n");
    process.stdout.write(`${report}\n`);
    writeSection(DOCS, "chat-api-query-cost", report);
  } finally {
    await kysely.destroy();
    await db.close();
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  }
}

void main().catch((error: unknown) => {
  process.stderr.write(`${String(error)}\n`);
  process.exit(1);
});
