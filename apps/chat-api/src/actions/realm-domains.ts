import type { Database } from "../db/database";
import { type DomainChange, deleteRealmDomain, setRealmDomain } from "../db/queries/realms";
import { activeUserIds } from "../db/queries/users";
import { sendEvent } from "../realtime/queue";

/**
 * Adds `domain` to the realm's sign-up domains, or sets whether its
 * subdomains may sign up, in one transaction with Zulip's `realm_domains`
 * event (`add` or `change`) to the realm's people.
 */
export function doSetRealmDomain(
  db: Database,
  realmId: number,
  domain: string,
  allowSubdomains: boolean,
): Promise<DomainChange> {
  return db.transaction(async (tx) => {
    const change = await setRealmDomain(tx, realmId, domain, allowSubdomains);
    if (change === "unchanged") return change;
    await sendEvent(tx, await activeUserIds(tx, realmId), {
      type: "realm_domains",
      op: change === "added" ? "add" : "change",
      realm_domain: { domain, allow_subdomains: allowSubdomains },
    });
    return change;
  });
}

/**
 * Removes `domain` from the realm's sign-up domains, in one transaction with
 * Zulip's `realm_domains` `remove` event; whether it was there.
 */
export function doRemoveRealmDomain(
  db: Database,
  realmId: number,
  domain: string,
): Promise<boolean> {
  return db.transaction(async (tx) => {
    if (!(await deleteRealmDomain(tx, realmId, domain))) return false;
    await sendEvent(tx, await activeUserIds(tx, realmId), {
      type: "realm_domains",
      op: "remove",
      domain,
    });
    return true;
  });
}
