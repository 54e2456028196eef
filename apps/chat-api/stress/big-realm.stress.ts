/**
 * The big realm (bench/big-realm-data.ts: 10,000 people, 1,000 channels, one
 * of 5,000 members, 200,000 messages) on PostgreSQL (a cluster of the
 * test's own): every operation of the URL table, called as an
 * administrator, answers without a 5xx, and the reads a client starts with
 * answer 200 with the big realm in them.
 */
import { type PrivatePostgres, privatePostgres } from "@repo/bench-kit";
import {
  type BigRealm,
  createBigRealm,
  registerCost,
  sweepOperations,
} from "../bench/big-realm-data";
import { type ChatProcess, startChatApi } from "./support";

jest.setTimeout(600_000);

let pg: PrivatePostgres | undefined;
let realm: BigRealm;
let chat: ChatProcess | undefined;

beforeAll(async () => {
  const cluster = await privatePostgres();
  pg = cluster;
  realm = await createBigRealm(cluster.url);
  chat = await startChatApi({
    DATABASE_URL: realm.url,
    CHAT_LOG_LEVEL: "warn",
    CHAT_EXTERNAL_URL: "http://localhost:9991",
  });
});

afterAll(async () => {
  chat?.child.kill("SIGKILL");
  await pg?.destroy();
});

it("answers every operation without a 5xx in a realm of 10,000 people and 200,000 messages", async () => {
  if (chat === undefined) throw new Error("chat-api did not start");
  const register = await registerCost(chat.base, realm);
  expect(register.bytes).toBeGreaterThan(1_000_000);
  const results = await sweepOperations(chat.base, realm, () => 1);
  expect(results.length).toBeGreaterThan(100);
  expect(results.filter((r) => r.statuses.some((s) => s >= 500)).map((r) => r.operation)).toEqual(
    [],
  );
  const status = (operation: string) => results.find((r) => r.operation === operation)?.statuses;
  for (const read of [
    "GET /messages",
    "GET /users",
    "GET /streams",
    "GET /users/me/subscriptions",
    "GET /streams/{stream_id}/members",
  ])
    expect([read, status(read)]).toEqual([read, [200]]);
  expect(status("POST /messages")).toEqual([200]);
  expect(status("POST /users/me/subscriptions")).toEqual([200]);
});
