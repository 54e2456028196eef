/**
 * `pnpm --filter chat-api db:migrate`: applies pending migrations to the
 * database that DATABASE_URL names (or the embedded one under CHAT_DATA_DIR),
 * then exits. What production runs before new replicas start.
 */
import { createDatabase } from "./database";
import { migrate } from "./migrate";

async function main(): Promise<void> {
  const url = process.env.DATABASE_URL;
  const db = await createDatabase(
    url !== undefined && url !== ""
      ? { kind: "postgres", url, poolSize: 1 }
      : { kind: "pglite", dataDir: process.env.CHAT_DATA_DIR ?? ".data/chat" },
  );
  try {
    const applied = await migrate(db.sql);
    process.stdout.write(
      applied.length === 0
        ? "database is up to date\n"
        : `applied ${applied.length}: ${applied.join(", ")}\n`,
    );
  } finally {
    await db.close();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(
    `migration failed: ${error instanceof Error ? error.message : String(error)}\n`,
  );
  process.exit(1);
});
