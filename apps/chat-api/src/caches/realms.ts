import { realmBySubdomain } from "../db/queries/realms";
import type { Database } from "../db/database";
import { LRUCache } from "lru-cache";
import type { Realm } from "../gen/prisma/client";
import type { CacheChange, Invalidatable } from "./cache-bus";

/** The realm a request is for: the subdomain its Host names, and the realm if one has it. */
export interface RealmContext {
  subdomain: string;
  realm: Realm | undefined;
}

/** Lower-cased host name without port (IPv6 brackets kept). */
export function hostName(host: string | undefined): string {
  const value = (host ?? "").trim().toLowerCase();
  if (value.startsWith("[")) return value.slice(0, value.indexOf("]") + 1);
  return value.replace(/:\d*$/, "");
}

/**
 * The subdomain a Host header selects: `<sub>.<root>` selects `<sub>`, where
 * `<root>` is the host of CHAT_EXTERNAL_URL; any other host (the root itself,
 * an IP address, another name) selects the root realm, subdomain "".
 */
export function subdomainOf(host: string | undefined, rootHost: string): string {
  const name = hostName(host);
  const suffix = `.${rootHost.toLowerCase()}`;
  return name.endsWith(suffix) && name.length > suffix.length ? name.slice(0, -suffix.length) : "";
}

/** Realms by subdomain, cached briefly and dropped on any change to a realm. */
export class RealmDirectory implements Invalidatable {
  private readonly cache = new LRUCache<string, { realm: Realm | null }>({
    max: 10_000,
    ttl: 60_000,
  });

  constructor(
    private readonly db: Database,
    private readonly rootHost: string,
  ) {}

  /** The realm the request's Host header selects. */
  async fromHost(host: string | undefined): Promise<RealmContext> {
    const subdomain = subdomainOf(host, this.rootHost);
    let hit = this.cache.get(subdomain);
    if (hit === undefined) {
      hit = { realm: await realmBySubdomain(this.db, subdomain) };
      this.cache.set(subdomain, hit);
    }
    return { subdomain, realm: hit.realm ?? undefined };
  }

  clear(): void {
    this.cache.clear();
  }

  invalidate(change: CacheChange): void {
    if ("realm" in change) this.cache.clear();
  }
}
