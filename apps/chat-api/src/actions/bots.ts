import { checkCap } from "./caps";
import { lockUser } from "../db/queries/users";
import { botCount, botNameTaken, publicAddressTaken, realmBot } from "../db/queries/bots";
import type { Database } from "../db/database";
import { InsufficientPermissionError, JsonableError } from "@repo/envelope";
import type { DatabaseAndBus } from "../caches/cache-bus";
import { isAdministrator } from "../lib/roles";
import { BotType, checkFullName, createAccount, doRegenerateApiKey } from "./accounts";
import type { AuthedUser } from "../caches/auth";
import { hasRealmPermission } from "./user-groups";

/** What POST /bots asks for, parsed. */
export interface NewBot {
  fullName: string;
  shortName: string;
  botType: number;
}

/**
 * Creates a bot owned by the caller in one transaction: the realm's
 * `can_create_bots_group`, Zulip's name rules, the address
 * `SHORT-bot@DOMAIN` unique in the realm. Returns its id, key and address.
 */
export async function doCreateBot(
  db: Database,
  owner: AuthedUser,
  bot: NewBot,
  domain: string,
  maxBots: number,
): Promise<{ id: number; apiKey: string; email: string }> {
  if (!(Object.values(BotType) as number[]).includes(bot.botType))
    throw new JsonableError("Invalid bot type");
  const fullName = checkFullName(bot.fullName);
  const shortName = bot.shortName.trim().toLowerCase();
  if (!/^[a-z0-9][a-z0-9._-]{0,39}$/.test(shortName))
    throw new JsonableError("Bad name or username");
  const email = `${shortName}-bot@${domain}`;
  return db.transaction(async (tx) => {
    if (!(await hasRealmPermission(tx, owner.realm_id, "can_create_bots_group_id", owner.id)))
      throw new InsufficientPermissionError();
    // One bot creation at a time per owner: the cap holds.
    await lockUser(tx, owner.id);
    checkCap(await botCount(tx, owner.id), 1, maxBots, "bots");
    if (await publicAddressTaken(tx, owner.realm_id, email))
      throw new JsonableError("Username already in use");
    if (await botNameTaken(tx, owner.realm_id, fullName))
      throw new JsonableError("Name is already in use!");
    const created = await createAccount(tx, {
      realmId: owner.realm_id,
      email,
      fullName,
      bot: { ownerId: owner.id, type: bot.botType },
    });
    return { ...created, email };
  });
}

/**
 * POST /bots/{id}/api_key/regenerate: a new key for a bot of the realm that
 * `user` owns or administers (system bots are nobody's); the old key stops
 * working at once on every replica. Returns the new key.
 */
export async function doRegenerateBotApiKey(
  services: DatabaseAndBus,
  realmId: number,
  user: AuthedUser,
  botId: number,
): Promise<string> {
  const bot = await realmBot(services.db, realmId, botId);
  if (bot === null) throw new JsonableError("No such bot");
  if (bot.bot_owner_id !== user.id && !isAdministrator(user.role))
    throw new InsufficientPermissionError();
  return doRegenerateApiKey(services, bot.id);
}
