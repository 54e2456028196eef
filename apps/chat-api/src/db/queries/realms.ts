import { sql } from "kysely";
import type { Prisma } from "../../gen/prisma/client";
import type { Tx } from "../kysely";

/**
 * Locks the realm's row against other lockers (NO KEY UPDATE: rows that merely
 * reference the realm, such as new messages, do not wait): one batch of
 * invitations at a time per realm.
 */
export async function lockRealm(tx: Tx, realmId: number): Promise<void> {
  await tx.q.selectFrom("realms").select("id").where("id", "=", realmId).forNoKeyUpdate().execute();
}

/** The realm's tables whose rows an administrator puts in order. */
export type OrderedTable = "linkifiers" | "custom_profile_fields" | "channel_folders";

/** The ids of the realm's rows of `table`, row-locked for a reordering. */
export async function lockOrderedRows(
  tx: Tx,
  table: OrderedTable,
  realmId: number,
): Promise<number[]> {
  const rows = await tx.q
    .selectFrom(table)
    .select("id")
    .where("realm_id", "=", realmId)
    .forUpdate()
    .execute();
  return rows.map((r) => r.id);
}

/**
 * Sets `order` of the realm's rows of `table` named in `positions` (id to
 * order), in one statement; rows not named keep theirs.
 */
export async function setRowOrder(
  tx: Tx,
  table: OrderedTable,
  realmId: number,
  positions: ReadonlyMap<number, number>,
): Promise<void> {
  if (positions.size === 0) return;
  const ids = [...positions.keys()];
  const orders = [...positions.values()];
  await sql`
    UPDATE ${sql.table(table)} AS t SET "order" = p.position
    FROM unnest(${ids}::int[], ${orders}::int[]) AS p(id, position)
    WHERE t.id = p.id AND t.realm_id = ${realmId}`.execute(tx.q);
}

/** The order a new row of `table` takes in the realm: after every other (0 for the first). */
export async function nextOrder(tx: Tx, table: OrderedTable, realmId: number): Promise<number> {
  const row = await tx.q
    .selectFrom(table)
    .select((eb) => eb.fn.max("order").as("last"))
    .where("realm_id", "=", realmId)
    .executeTakeFirst();
  return (row?.last ?? -1) + 1;
}

/** Sets whether a realm is deactivated. */
export async function setRealmDeactivated(
  tx: Tx,
  realmId: number,
  deactivated: boolean,
): Promise<void> {
  await tx.prisma.realm.update({ where: { id: realmId }, data: { deactivated } });
}

/** Realm `realmId`'s row (it exists: a caller's own realm). */
export function realmById(tx: Tx, realmId: number) {
  return tx.prisma.realm.findUniqueOrThrow({ where: { id: realmId } });
}

/** A new realm's own columns. */
export interface NewRealm {
  subdomain: string;
  name: string;
  description?: string;
}

/** Stores a realm; answers its id. */
export async function insertRealm(tx: Tx, realm: NewRealm): Promise<number> {
  return (await tx.prisma.realm.create({ data: realm, select: { id: true } })).id;
}

/** Changes some of the realm's settings. */
export async function updateRealm(
  tx: Tx,
  realmId: number,
  change: Prisma.RealmUncheckedUpdateInput,
): Promise<void> {
  await tx.prisma.realm.update({ where: { id: realmId }, data: change });
}

/** The realm with its moderation request channel (or null). */
export function realmWithModerationChannel(tx: Tx, realmId: number) {
  return tx.prisma.realm.findUniqueOrThrow({
    where: { id: realmId },
    include: { moderation_request_channel: true },
  });
}

/** How many realms there are. */
export function realmCount(tx: Tx): Promise<number> {
  return tx.prisma.realm.count();
}

/** The realm at `subdomain`, or null. */
export function realmBySubdomain(tx: Tx, subdomain: string) {
  return tx.prisma.realm.findUnique({ where: { subdomain } });
}

/** Every realm, by id. */
export function allRealms(tx: Tx) {
  return tx.prisma.realm.findMany({ orderBy: { id: "asc" } });
}

/** The realm's sign-up domains (`realm_domains`), by name. */
export function realmDomains(tx: Tx, realmId: number) {
  return tx.prisma.realmDomain.findMany({
    where: { realm_id: realmId },
    select: { domain: true, allow_subdomains: true },
    orderBy: { domain: "asc" },
  });
}

/** What setting one of the realm's sign-up domains did. */
export type DomainChange = "added" | "changed" | "unchanged";

/**
 * Makes `domain` one of the realm's sign-up domains with `allowSubdomains`, in
 * one statement (two setting it at once cannot both see it absent): whether
 * it was added, changed, or already so.
 */
export async function setRealmDomain(
  tx: Tx,
  realmId: number,
  domain: string,
  allowSubdomains: boolean,
): Promise<DomainChange> {
  const row = await tx.q
    .insertInto("realm_domains")
    .values({ realm_id: realmId, domain, allow_subdomains: allowSubdomains })
    .onConflict((oc) =>
      oc
        .columns(["realm_id", "domain"])
        .doUpdateSet({ allow_subdomains: allowSubdomains })
        .where("realm_domains.allow_subdomains", "<>", allowSubdomains),
    )
    // xmax is 0 on a row this statement inserted, and set on one it updated.
    .returning(sql<boolean>`xmax = 0`.as("inserted"))
    .executeTakeFirst();
  if (row === undefined) return "unchanged";
  return row.inserted ? "added" : "changed";
}

/** Removes one of the realm's sign-up domains; whether it was there. */
export async function deleteRealmDomain(tx: Tx, realmId: number, domain: string): Promise<boolean> {
  const { count } = await tx.prisma.realmDomain.deleteMany({
    where: { realm_id: realmId, domain },
  });
  return count > 0;
}
