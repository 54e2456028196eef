import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";

/**
 * The PostgreSQL pool's connections send one statement at a time
 * (`src/db/pg-client.ts`): statements a transaction sends at once wait their
 * turn there, not in node-postgres's own queue, which pg 8 deprecates (its
 * "already executing a query" warning, printed by the process) and pg 9
 * removes. In a process of its own, whose warnings the test reads. Runs in
 * the PostgreSQL project only.
 */
const run = promisify(execFile);

const script = `
const { OneStatementAtATime } = require("./src/db/pg-client");
(async () => {
  const client = new OneStatementAtATime({ connectionString: process.env.TEST_DATABASE_URL });
  await client.connect();
  const answers = await Promise.all(
    [3, 1, 2].map((n) => client.query("SELECT $1::int AS n, pg_sleep(0.02)", [n])),
  );
  const failing = client.query("SELECT 1 / 0").then(() => "answered", (error) => error.message);
  const after = client.query("SELECT 7 AS n");
  const outcome = { answers: answers.map((r) => r.rows[0].n), failing: await failing, after: (await after).rows };
  await client.end();
  process.stdout.write(JSON.stringify(outcome));
})();
`;

it("holds statements sent at once until the one before has ended, answering each in order", async () => {
  const { stdout, stderr } = await run(
    process.execPath,
    ["--conditions=@repo/source", "--require", "@swc-node/register", "-e", script],
    { cwd: join(__dirname, ".."), env: process.env },
  );
  expect(JSON.parse(stdout)).toEqual({
    answers: [3, 1, 2],
    // A statement that fails does not hold back the ones after it.
    failing: "division by zero",
    after: [{ n: 7 }],
  });
  expect(stderr).not.toContain("already executing a query");
});
