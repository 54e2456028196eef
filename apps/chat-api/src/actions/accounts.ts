import { Role, generateApiKey } from "../db/seed";
import { sendEvent } from "../events/queue";
import type { CacheChange } from "../lib/cache-bus";
import type { Services } from "../services";
import type { Prisma } from "../gen/prisma/client";

type Deps = Pick<Services, "db" | "bus">;

/** Runs `write` in one transaction that also announces `change`; then drops this replica's cached rows. */
async function changeAndAnnounce(
  { db, bus }: Deps,
  change: CacheChange,
  write: (tx: Prisma.TransactionClient) => Promise<unknown>,
): Promise<void> {
  await db.prisma.$transaction(async (tx) => {
    await write(tx);
    await bus.announce(tx, change);
  });
  bus.apply(change);
}

/** Deactivates (or reactivates) a user or bot; its API key stops (or starts) working on every replica at once. */
export async function doSetUserActive(deps: Deps, userId: number, active: boolean): Promise<void> {
  await changeAndAnnounce(deps, { user: userId }, (tx) =>
    tx.user.update({ where: { id: userId }, data: { is_active: active } }),
  );
}

/** Deactivates (or reactivates) a realm; its users' keys stop (or start) working on every replica at once. */
export async function doSetRealmActive(
  deps: Deps,
  realmId: number,
  active: boolean,
): Promise<void> {
  await changeAndAnnounce(deps, { realm: realmId }, (tx) =>
    tx.realm.update({ where: { id: realmId }, data: { deactivated: !active } }),
  );
}

/** Gives a user a new API key; the old one stops working on every replica at once. Returns the new key. */
export async function doRegenerateApiKey(deps: Deps, userId: number): Promise<string> {
  const apiKey = generateApiKey();
  await changeAndAnnounce(deps, { user: userId }, async (tx) => {
    const user = await tx.user.update({ where: { id: userId }, data: { api_key: apiKey } });
    if (!user.is_bot) return;
    // Zulip tells the bot's owner and the realm's administrators (who see every bot).
    const admins = await tx.user.findMany({
      where: { realm_id: user.realm_id, is_active: true, role: { lte: Role.ADMINISTRATOR } },
      select: { id: true },
    });
    const audience = new Set(admins.map((a) => a.id));
    if (user.bot_owner_id !== null) audience.add(user.bot_owner_id);
    await sendEvent(tx, [...audience], {
      type: "realm_bot",
      op: "update",
      bot: { user_id: user.id, api_key: apiKey },
    });
  });
  return apiKey;
}
