import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createDatabase } from "../src/db/database";

/**
 * The embedded database's data directory: a new one is made (PGlite's initdb,
 * in a child process so that the server's process does not keep initdb's
 * memory), then opened; an existing one is opened as it is.
 */
let parent: string;
beforeAll(async () => {
  parent = await mkdtemp(join(tmpdir(), "chat-data-dir-"));
});
afterAll(() => rm(parent, { recursive: true, force: true }));

it("makes a missing data directory, nested, and keeps what is written there", async () => {
  const dataDir = join(parent, "nested", "chat");
  const first = await createDatabase({ kind: "pglite", dataDir, sharedBuffers: "16MB" });
  try {
    expect(existsSync(join(dataDir, "PG_VERSION"))).toBe(true);
    await first.sql.query("CREATE TABLE kept (note text)");
    await first.sql.query("INSERT INTO kept VALUES ($1)", ["still here"]);
  } finally {
    await first.close();
  }
  const again = await createDatabase({ kind: "pglite", dataDir, sharedBuffers: "16MB" });
  try {
    expect(await again.sql.query<{ note: string }>("SELECT note FROM kept")).toEqual([
      { note: "still here" },
    ]);
  } finally {
    await again.close();
  }
});
