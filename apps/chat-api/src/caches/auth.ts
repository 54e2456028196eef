import type { Database } from "../db/database";
import { accountByApiKey } from "../db/queries/users";
import { timingSafeEqual } from "node:crypto";
import { UnauthorizedError, JsonableError } from "@repo/envelope";
import { LRUCache } from "lru-cache";
import type { CacheChange, Invalidatable } from "./cache-bus";
import type { RealmContext } from "./realms";

/** The caller of an authenticated operation, as the auth cache holds it. */
export interface AuthedUser {
  id: number;
  realm_id: number;
  email: string;
  delivery_email: string;
  full_name: string;
  role: number;
  is_bot: boolean;
  bot_type: number | null;
  bot_owner_id: number | null;
  is_active: boolean;
  realm_deactivated: boolean;
}

/**
 * A cached account: its user, its key's bytes (compared with the given
 * key's in constant time) and its two e-mail addresses in lower case, made
 * once here rather than at every request.
 */
interface Cached {
  user: AuthedUser;
  key: Uint8Array;
  emails: readonly [string, string];
}

const API_KEY = /^[A-Za-z0-9]{32}$/;

/** Constant-time comparison of two API keys' bytes. */
const sameKey = (a: Uint8Array, b: Uint8Array): boolean =>
  a.length === b.length && timingSafeEqual(a, b);

const UTF8 = new TextEncoder();

/**
 * A key's bytes, kept as long as its cache entry: in a buffer of their own.
 * `Buffer.from` would cut them from Node's shared 8 KiB pool, and a kept slice
 * keeps its whole pool alive.
 */
const keyBytes = (key: string): Uint8Array => UTF8.encode(key);

/**
 * API-key lookups, cached: every request needs one, and a database round trip
 * each time would dominate short requests. Entries go at once on a key
 * regeneration or a deactivation (see CacheBus), and after a minute anyway.
 */
export class AuthCache implements Invalidatable {
  private readonly byKey = new LRUCache<string, Cached>({ max: 100_000, ttl: 60_000 });
  /** Lookups under way: concurrent requests with the same key wait for one query. */
  private readonly pending = new Map<string, Promise<Cached | undefined>>();
  /** Bumped by every invalidation: a lookup that began before one does not fill the cache. */
  private generation = 0;

  constructor(private readonly db: Database) {}

  /** The user that owns `apiKey`, or undefined. */
  async lookup(apiKey: string): Promise<AuthedUser | undefined> {
    return (await this.account(apiKey, keyBytes(apiKey)))?.user;
  }

  /** The account that owns `apiKey` (whose bytes are `key`), or undefined. */
  async account(apiKey: string, key: Uint8Array): Promise<Cached | undefined> {
    const hit = this.byKey.get(apiKey);
    if (hit !== undefined && sameKey(hit.key, key)) return hit;
    let pending = this.pending.get(apiKey);
    if (pending === undefined) {
      pending = this.load(apiKey).finally(() => this.pending.delete(apiKey));
      this.pending.set(apiKey, pending);
    }
    const found = await pending;
    return found !== undefined && sameKey(found.key, key) ? found : undefined;
  }

  private async load(apiKey: string): Promise<Cached | undefined> {
    const generation = this.generation;
    const row = await accountByApiKey(this.db, apiKey);
    // System bots (the notification bot) act only inside the server: their keys open nothing.
    if (row === undefined || row.is_system_bot) return undefined;
    const user: AuthedUser = {
      id: row.id,
      realm_id: row.realm_id,
      email: row.email,
      delivery_email: row.delivery_email,
      full_name: row.full_name,
      role: row.role,
      is_bot: row.is_bot,
      bot_type: row.bot_type,
      bot_owner_id: row.bot_owner_id,
      is_active: row.is_active,
      realm_deactivated: row.realm_deactivated,
    };
    const cached: Cached = {
      user,
      key: keyBytes(row.api_key),
      emails: [row.delivery_email.toLowerCase(), row.email.toLowerCase()],
    };
    if (generation === this.generation) this.byKey.set(apiKey, cached);
    return cached;
  }

  clear(): void {
    this.generation += 1;
    this.byKey.clear();
  }

  invalidate(change: CacheChange): void {
    this.generation += 1;
    for (const [key, { user }] of this.byKey.entries()) {
      if ("user" in change ? user.id === change.user : user.realm_id === change.realm)
        this.byKey.delete(key);
    }
  }
}

/** Credentials from an `Authorization: Basic` header, or the contract's error. */
export function parseBasicAuth(header: string | undefined): { email: string; apiKey: string } {
  if (header === undefined || header.trim() === "") {
    throw new UnauthorizedError("Not logged in: API authentication or user session required");
  }
  const [scheme = "", encoded = ""] = header.trim().split(/\s+/, 2);
  if (scheme.toLowerCase() !== "basic") {
    throw new JsonableError("This endpoint requires HTTP basic authentication.");
  }
  const decoded = /^[A-Za-z0-9+/]*={0,2}$/.test(encoded)
    ? Buffer.from(encoded, "base64").toString("utf8")
    : "";
  const colon = decoded.indexOf(":");
  if (colon < 0 || decoded.includes("\uFFFD"))
    throw new UnauthorizedError("Invalid authorization header for basic auth");
  return { email: decoded.slice(0, colon).trim(), apiKey: decoded.slice(colon + 1).trim() };
}

/**
 * The credentials of a header as {@link authenticate} reads them: the
 * claimed address in lower case, and the key's bytes when it is well-formed.
 */
interface Credentials {
  claimed: string;
  apiKey: string;
  key: Uint8Array | undefined;
}

/**
 * Headers already decoded (a client sends the same one with every request;
 * 4-6 µs of a poll's 73 µs of CPU went to decoding it again). A pure
 * function's results, so shared by every server of the process; at most
 * 10,000, the least recently used go first. Only the decoding is kept: the
 * key is looked up and checked on every request.
 */
const decoded = new LRUCache<string, Credentials>({ max: 10_000 });

/** {@link parseBasicAuth}, remembered for the headers it accepted. */
function credentialsOf(header: string | undefined): Credentials {
  const known = header === undefined ? undefined : decoded.get(header);
  if (known !== undefined) return known;
  const { email, apiKey } = parseBasicAuth(header);
  const credentials: Credentials = {
    claimed: email.toLowerCase(),
    apiKey,
    key: API_KEY.test(apiKey) ? keyBytes(apiKey) : undefined,
  };
  if (header !== undefined) decoded.set(header, credentials);
  return credentials;
}

/** Authenticates a request exactly as the contract's table says, in its order. */
export async function authenticate(
  header: string | undefined,
  context: RealmContext,
  cache: AuthCache,
): Promise<AuthedUser> {
  const { claimed, apiKey, key } = credentialsOf(header);
  if (key === undefined) throw new UnauthorizedError("Malformed API key");
  const account = await cache.account(apiKey, key);
  if (account === undefined || (claimed !== account.emails[0] && claimed !== account.emails[1])) {
    throw new UnauthorizedError("Invalid API key");
  }
  const { user } = account;
  if (!user.is_active) throw new UnauthorizedError("Account is deactivated");
  if (user.realm_deactivated) throw new UnauthorizedError("This organization has been deactivated");
  if (context.realm === undefined || context.realm.id !== user.realm_id) {
    throw new UnauthorizedError("Account is not associated with this subdomain");
  }
  return user;
}
