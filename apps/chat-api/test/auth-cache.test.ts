/**
 * The API-key cache: one query per key however many requests arrive at once,
 * none while the entry lives, and a fresh one after an invalidation.
 */
import type { Database } from "../src/db/database";
import type { KyselyPlugin } from "kysely";
import { AuthCache, authenticate } from "../src/caches/auth";
import { freshDatabase } from "./support/database";

let db: Database;

beforeAll(async () => {
  db = await freshDatabase("seeded");
});

afterAll(async () => {
  await db.close();
});

/** A cache over the real database, counting the statements (user lookups) it sends. */
function countingCache() {
  const counter = { lookups: 0 };
  const counting: KyselyPlugin = {
    transformQuery(args) {
      counter.lookups += 1;
      return args.node;
    },
    transformResult(args) {
      return Promise.resolve(args.result);
    },
  };
  return { cache: new AuthCache({ ...db, q: db.q.withPlugin(counting) }), counter };
}

describe("AuthCache", () => {
  it("sends one lookup for many concurrent requests with one key, then none", async () => {
    const hamlet = await db.prisma.user.findFirstOrThrow({
      where: { email: "hamlet@example.com" },
    });
    const { cache, counter } = countingCache();
    const users = await Promise.all(Array.from({ length: 20 }, () => cache.lookup(hamlet.api_key)));
    expect(users.map((u) => u?.id)).toEqual(Array.from({ length: 20 }, () => hamlet.id));
    expect(counter.lookups).toBe(1);
    await cache.lookup(hamlet.api_key);
    expect(counter.lookups).toBe(1);

    cache.invalidate({ user: hamlet.id });
    expect((await cache.lookup(hamlet.api_key))?.id).toBe(hamlet.id);
    expect(counter.lookups).toBe(2);
  });

  it("does not cache what a lookup read before an invalidation", async () => {
    const iago = await db.prisma.user.findFirstOrThrow({ where: { email: "iago@example.com" } });
    const { cache, counter } = countingCache();
    const racing = cache.lookup(iago.api_key);
    cache.invalidate({ user: iago.id });
    expect((await racing)?.id).toBe(iago.id);
    await cache.lookup(iago.api_key);
    expect(counter.lookups).toBe(2);
  });

  it("answers undefined for an unknown key, and every waiter gets the same answer", async () => {
    const { cache, counter } = countingCache();
    const unknown = "Q".repeat(32);
    expect(await Promise.all([cache.lookup(unknown), cache.lookup(unknown)])).toEqual([
      undefined,
      undefined,
    ]);
    expect(counter.lookups).toBe(1);
  });
});

describe("authenticate", () => {
  const basic = (email: string, key: string) =>
    `Basic ${Buffer.from(`${email}:${key}`).toString("base64")}`;

  it("checks the key on every request, though it decodes a header once", async () => {
    const cordelia = await db.prisma.user.findFirstOrThrow({
      where: { email: "cordelia@example.com" },
    });
    const realm = await db.prisma.realm.findUniqueOrThrow({ where: { id: cordelia.realm_id } });
    const context = { subdomain: realm.subdomain, realm };
    const { cache } = countingCache();
    const header = basic(cordelia.email, cordelia.api_key);
    for (let i = 0; i < 2; i++)
      expect((await authenticate(header, context, cache)).id).toBe(cordelia.id);
    // A new key: the same header, decoded before, opens nothing any more.
    await db.prisma.user.update({
      where: { id: cordelia.id },
      data: { api_key: "N".repeat(32) },
    });
    cache.invalidate({ user: cordelia.id });
    await expect(authenticate(header, context, cache)).rejects.toThrow("Invalid API key");
    expect((await authenticate(basic(cordelia.email, "N".repeat(32)), context, cache)).id).toBe(
      cordelia.id,
    );
    // A header that does not decode is refused every time.
    for (let i = 0; i < 2; i++)
      await expect(authenticate("Basic %%%", context, cache)).rejects.toThrow(
        "Invalid authorization header for basic auth",
      );
  });
});
