import { buildApi } from "../src/urls";
import { type TestServer, startTestServer } from "./support/server";

/**
 * A first line of defence (the fast-check suite of the hardening work goes
 * further): every registered operation, given hostile values for every
 * parameter, answers in the envelope, never with a 5xx.
 */
const HOSTILE = [
  "",
  "\u0000",
  "x".repeat(5000),
  "-1",
  "99999999999999999999",
  "1e400",
  "[]",
  "{}",
  "null",
  "true",
  '{"a":'.repeat(50),
  "\ud800",
  '[1,2,"x"]',
  '{"direct_members":[1e300],"direct_subgroups":[]}',
  "[99999999999]",
  "[-99999999999]",
];

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});

afterAll(() => server.close());

it("answers hostile values for every parameter of every operation in the envelope, never with a 5xx", async () => {
  const iago = await server.person("iago");
  const failures: string[] = [];
  for (const op of buildApi(server.services).operations) {
    const path = `/api/v1${op.path.replace(/\{\w+\}/g, "1")}`;
    for (const value of HOSTILE) {
      const fields = Object.fromEntries(Object.keys(op.params).map((name) => [name, value]));
      const reply = await server.call(op.method, path, {
        auth: [iago.email, iago.apiKey],
        ...(op.method === "GET" ? { query: fields } : { form: fields }),
      });
      const enveloped = op.bare || reply.body.result === "success" || reply.body.result === "error";
      if (reply.status >= 500 || !enveloped)
        failures.push(
          `${op.method} ${op.path} ${JSON.stringify(value).slice(0, 30)}: ${reply.status}`,
        );
    }
  }
  expect(failures).toEqual([]);
});
