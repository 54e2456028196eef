import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { type TestServer, startTestServer } from "./support/server";

const run = promisify(execFile);

/** The README's quick-start session, exactly as written between its markers. */
function readmeSession(): string[] {
  const readme = readFileSync(join(__dirname, "../../../README.md"), "utf8");
  const block =
    /<!-- quick-start-session -->\s*```sh\n([\s\S]*?)```\s*<!-- \/quick-start-session -->/.exec(
      readme,
    )?.[1];
  if (block === undefined) throw new Error("README has no quick-start session");
  return block.trim().split("\n");
}

/** Splits a shell line into words (the session uses no quoting). */
const words = (line: string): string[] => line.trim().split(/\s+/);

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({ env: { CHAT_EXTERNAL_URL: "http://localhost:9991" } });
});

afterAll(() => server.close());

describe("the README's quick-start session", () => {
  it("works as written against a started server", async () => {
    const [fetchKey, firstCall, ...rest] = readmeSession();
    expect(rest).toEqual([]);
    expect(fetchKey).toMatch(/^curl .*dev_fetch_api_key/);
    // Only the port differs: the test server listens where it can.
    const onTestPort = (line: string) =>
      line.replaceAll("localhost:9991", `localhost:${server.port}`);
    const [cmd1, ...args1] = words(onTestPort(fetchKey ?? ""));
    const first = await run(cmd1 ?? "curl", args1);
    const key = JSON.parse(first.stdout) as { result: string; api_key: string; email: string };
    expect(key).toMatchObject({ result: "success", email: "hamlet@example.com" });
    expect(key.api_key).toMatch(/^[A-Za-z0-9]{32}$/);

    const [cmd2, ...args2] = words(onTestPort(firstCall ?? "").replace("API_KEY", key.api_key));
    const second = await run(cmd2 ?? "curl", args2);
    const me = JSON.parse(second.stdout) as Record<string, unknown>;
    expect(me).toMatchObject({
      result: "success",
      email: "hamlet@example.com",
      full_name: "King Hamlet",
    });
  });
});
