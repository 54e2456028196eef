import { until } from "@repo/bench-kit";
import { doRegenerateApiKey, doSetRealmActive, doSetUserActive } from "../src/actions/accounts";
import { freshDatabase, type TestDatabase } from "./support/database";
import { type Person, type TestServer, startTestServer } from "./support/server";
import { testApi } from "./support/test-api";

/**
 * Two app instances on one database stand for two replicas: a change made
 * through one must take effect on the other at once, although each caches
 * API-key lookups.
 */
let db: TestDatabase;
let a: TestServer;
let b: TestServer;

beforeAll(async () => {
  db = await freshDatabase("seeded");
  a = await startTestServer({ api: testApi, db });
  // On PostgreSQL the second replica has its own pool; PGlite is one connection per process, so it shares.
  const second = (await db.replica?.()) ?? { ...db, close: () => Promise.resolve() };
  b = await startTestServer({ api: testApi, db: second });
});

afterAll(async () => {
  await b.close();
  await a.close();
  await db.close();
});

/** Resolves once `b` answers `person`'s call with `status`; rejects after two seconds. */
function answersOnOtherReplica(person: Person, status: number): Promise<void> {
  return until(
    async () =>
      (await b.call("GET", "/api/v1/test/whoami", { auth: [person.email, person.apiKey] }))
        .status === status,
    2000,
    `the other replica to answer ${person.email}'s call with ${String(status)}`,
    20,
  );
}

describe("auth cache invalidation across replicas", () => {
  it("a deactivation on one replica locks the user out of the other", async () => {
    const othello = await a.person("othello");
    expect(
      (await b.call("GET", "/api/v1/test/whoami", { auth: [othello.email, othello.apiKey] }))
        .status,
    ).toBe(200);
    await doSetUserActive(a.services, othello.id, false);
    expect(
      (await a.call("GET", "/api/v1/test/whoami", { auth: [othello.email, othello.apiKey] }))
        .status,
    ).toBe(401);
    await answersOnOtherReplica(othello, 401);
    await doSetUserActive(a.services, othello.id, true);
    await answersOnOtherReplica(othello, 200);
  });

  it("a regenerated key stops working on the other replica and the new one works", async () => {
    const iago = await a.person("iago");
    expect(
      (await b.call("GET", "/api/v1/test/whoami", { auth: [iago.email, iago.apiKey] })).status,
    ).toBe(200);
    const fresh = await doRegenerateApiKey(a.services, iago.id);
    await answersOnOtherReplica(iago, 401);
    await answersOnOtherReplica({ ...iago, apiKey: fresh }, 200);
  });

  it("a realm deactivation locks its users out of the other replica", async () => {
    const hamlet = await a.person("hamlet");
    expect(
      (await b.call("GET", "/api/v1/test/whoami", { auth: [hamlet.email, hamlet.apiKey] })).status,
    ).toBe(200);
    await doSetRealmActive(a.services, (await db.prisma.realm.findFirstOrThrow()).id, false);
    await answersOnOtherReplica(hamlet, 401);
    const reply = await b.call("GET", "/api/v1/test/whoami", {
      auth: [hamlet.email, hamlet.apiKey],
    });
    expect(reply.body.msg).toBe("This organization has been deactivated");
    await doSetRealmActive(a.services, (await db.prisma.realm.findFirstOrThrow()).id, true);
    await answersOnOtherReplica(hamlet, 200);
  });
});
