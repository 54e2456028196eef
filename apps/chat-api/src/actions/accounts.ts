import type { RateLimiter } from "../lib/rate-limit";
import {
  accountByDeliveryEmail,
  activeAdministratorIds,
  activeUserIds,
  activeUserRoles,
  addressTaken,
  canCreateUsers,
  deactivateUsers,
  insertUser,
  setApiKey,
  setPasswordHash,
  setUserActive,
  userWithProfile,
} from "../db/queries/users";
import { advancePointer, pointerOf } from "../db/queries/user-settings";
import { deleteQueuesOfUsers } from "../db/queries/events";
import { activeBotIds } from "../db/queries/bots";
import { codePoints } from "../lib/text";
import type { Tx } from "../db/kysely";
import type { Database } from "../db/database";
import { ErrorCode, JsonableError, UnauthorizedError } from "@repo/envelope";
import { sendEvent } from "../realtime/queue";
import type { CacheChange } from "../caches/cache-bus";
import type { AuthedUser } from "../caches/auth";
import type { DatabaseAndBus } from "../caches/cache-bus";
import type { Realm } from "../gen/prisma/client";
import { Role, isAdministrator } from "../lib/roles";
import { z } from "zod";
import { announceSubscriptions } from "./subscription-events";
import { userView } from "./user-view";
import { GROUP_OF_ROLE } from "./realm-creation";
import { groupByName, insertGroupMembers } from "../db/queries/user-groups";
import { realmById, setRealmDeactivated } from "../db/queries/realms";
import type { SettingValue } from "../lib/user-settings";
import { defaultChannels } from "../db/queries/channels";
import { activateSubscriptions } from "../db/queries/subscriptions";
import { holdsMessage } from "../db/queries/user-messages";
import { MAX_PASSWORD_LENGTH, checkPassword, hashPassword } from "../lib/passwords";
import { isStrongPassword } from "../lib/password-strength";
import { randomKey } from "../lib/random-key";

/** Zulip's full-name rules, with its messages. */
export function checkFullName(name: string): string {
  const trimmed = name.trim();
  if (trimmed === "") throw new JsonableError("Name too short!");
  if (codePoints(trimmed) > 100) throw new JsonableError("Name too long!");
  if (/[\p{Cc}\p{Cs}\p{Cn}*`\\>"@]/u.test(trimmed))
    throw new JsonableError("Invalid characters in name!");
  return trimmed;
}

type Deps = DatabaseAndBus;

/** Zulip's bot types. */
export const BotType = {
  GENERIC: 1,
  INCOMING_WEBHOOK: 2,
  OUTGOING_WEBHOOK: 3,
  EMBEDDED: 4,
} as const;

const ALPHANUMERICS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/** A fresh API key: 32 random alphanumerics (crypto-strength, no modulo bias). */
export function generateApiKey(): string {
  return randomKey(ALPHANUMERICS, 32);
}

/** A new user or bot. */
export interface NewAccount {
  realmId: number;
  email: string;
  fullName: string;
  /** A role of {@link Role}; bots are members. */
  role?: number;
  bot?: { ownerId: number | null; system?: boolean; type?: number };
}

/**
 * Creates a user or generic bot with a fresh API key and puts it in the system
 * group of its role, inside transaction `tx`; returns its id and key.
 */
export async function createAccount(
  tx: Tx,
  account: NewAccount,
): Promise<{ id: number; apiKey: string }> {
  const role = account.bot === undefined ? (account.role ?? Role.MEMBER) : Role.MEMBER;
  const apiKey = generateApiKey();
  // The organization's defaults of personal settings (PATCH /realm/user_settings_defaults),
  // its language (PATCH /realm's default_language) unless those name one.
  const realm = await realmById(tx, account.realmId);
  const { enable_drafts_synchronization: drafts, ...defaults } =
    realm.user_settings_defaults as Record<string, SettingValue>;
  const user = await insertUser(tx, {
    settings: {
      ...(realm.default_language === "en" ? {} : { default_language: realm.default_language }),
      ...defaults,
    },
    ...(typeof drafts === "boolean" ? { enable_drafts_synchronization: drafts } : {}),
    realm_id: account.realmId,
    email: account.email,
    delivery_email: account.email,
    full_name: account.fullName,
    role,
    api_key: apiKey,
    ...(account.bot === undefined
      ? {}
      : {
          is_bot: true,
          bot_type: account.bot.type ?? BotType.GENERIC,
          bot_owner_id: account.bot.ownerId,
          is_system_bot: account.bot.system ?? false,
        }),
  });
  const group = await groupByName(tx, account.realmId, GROUP_OF_ROLE[role] ?? "role:everyone");
  await insertGroupMembers(tx, group.id, [user.id]);
  await announcePerson(tx, user.realm_id, user.id);
  return { id: user.id, apiKey };
}

/**
 * Tells the realm's active users of a new account (`realm_user` `add`), each
 * as they may see it: administrators and the user with the delivery address.
 */
async function announcePerson(tx: Tx, realmId: number, userId: number): Promise<void> {
  const row = await userWithProfile(tx, userId);
  const audience = await activeUserRoles(tx, realmId);
  const person = (showDeliveryEmail: boolean) => {
    const view = userView(row, { showDeliveryEmail, clientGravatar: false });
    if (row.is_bot) delete view.profile_data;
    return view;
  };
  const insiders = audience.filter((u) => isAdministrator(u.role) || u.id === userId);
  const others = audience.filter((u) => !insiders.includes(u));
  await sendEvent(
    tx,
    insiders.map((u) => u.id),
    { type: "realm_user", op: "add", person: person(true) },
  );
  await sendEvent(
    tx,
    others.map((u) => u.id),
    { type: "realm_user", op: "add", person: person(false) },
  );
}

/**
 * Runs `write` in one transaction that also announces the changes it returns;
 * then drops this replica's cached rows.
 */
async function changeAndAnnounce(
  { db, bus }: Deps,
  write: (tx: Tx) => Promise<CacheChange[]>,
): Promise<void> {
  const changes = await db.transaction(async (tx) => {
    const made = await write(tx);
    for (const change of made) await bus.announce(tx, change);
    return made;
  });
  for (const change of changes) bus.apply(change);
}

/**
 * Deactivates (or reactivates) a user or bot; its API key stops (or starts)
 * working on every replica at once. A deactivated user's active bots are
 * deactivated with it, as Zulip does (reactivating the user leaves them off),
 * and their event queues are deleted: a poll waiting on any replica ends.
 * `alsoInTx` runs in the same transaction (an e-mail to queue, say).
 */
export async function doSetUserActive(
  deps: Deps,
  userId: number,
  active: boolean,
  alsoInTx?: (tx: Tx) => Promise<void>,
): Promise<void> {
  await changeAndAnnounce(deps, async (tx) => {
    const user = await setUserActive(tx, userId, active);
    const bots = active ? [] : await activeBotIds(tx, userId);
    await deactivateUsers(tx, bots);
    if (!active) await deleteQueuesOfUsers(tx, [userId, ...bots]);
    // `realm_user` `update` with `is_active` (Zulip's since feature level 222).
    const audience = await activeUserIds(tx, user.realm_id);
    for (const id of [userId, ...bots])
      await sendEvent(tx, audience, {
        type: "realm_user",
        op: "update",
        person: { user_id: id, is_active: active },
      });
    await alsoInTx?.(tx);
    return [{ user: userId }, ...bots.map((id) => ({ user: id }))];
  });
}

/** Deactivates (or reactivates) a realm; its users' keys stop (or start) working on every replica at once. */
export async function doSetRealmActive(
  deps: Deps,
  realmId: number,
  active: boolean,
): Promise<void> {
  await changeAndAnnounce(deps, async (tx) => {
    await setRealmDeactivated(tx, realmId, !active);
    return [{ realm: realmId }];
  });
}

/** Gives a user a new API key; the old one stops working on every replica at once. Returns the new key. */
export async function doRegenerateApiKey(deps: Deps, userId: number): Promise<string> {
  const apiKey = generateApiKey();
  await changeAndAnnounce(deps, async (tx) => {
    const user = await setApiKey(tx, userId, apiKey);
    if (!user.is_bot) return [{ user: userId }];
    // Zulip tells the bot's owner and the realm's administrators (who see every bot).
    const audience = new Set(await activeAdministratorIds(tx, user.realm_id));
    if (user.bot_owner_id !== null) audience.add(user.bot_owner_id);
    await sendEvent(tx, [...audience], {
      type: "realm_bot",
      op: "update",
      bot: { user_id: user.id, api_key: apiKey },
    });
    return [{ user: userId }];
  });
  return apiKey;
}

/**
 * POST /dev_fetch_api_key: the key of the active account whose delivery e-mail
 * is `email` (any case) in `realm`, with Zulip's answers for a deactivated
 * realm, an unknown address and a deactivated account.
 */
export async function devApiKey(
  db: Database,
  realm: Realm,
  email: string,
): Promise<{ api_key: string; email: string; user_id: number }> {
  const user = await accountByDeliveryEmail(db, realm.id, email);
  if (realm.deactivated) {
    throw new UnauthorizedError(
      "This organization has been deactivated",
      ErrorCode.REALM_DEACTIVATED,
    );
  }
  if (user === undefined) {
    throw new UnauthorizedError(
      "Your username or password is incorrect",
      ErrorCode.AUTHENTICATION_FAILED,
    );
  }
  if (!user.is_active)
    throw new UnauthorizedError("Account is deactivated", ErrorCode.USER_DEACTIVATED);
  return { api_key: user.api_key, email: user.email, user_id: user.id };
}

/** The wrong address or password: one answer for both, as Zulip gives. */
const badCredentials = () =>
  new UnauthorizedError("Your username or password is incorrect", ErrorCode.AUTHENTICATION_FAILED);

/**
 * POST /fetch_api_key: the API key of the account whose delivery address is
 * `username` (any case) in `realm`, when `password` is its password. Zulip's
 * order: a deactivated realm, password login turned off, wrong credentials
 * (the password is hashed even when there is no such account, so both take
 * as long), then a deactivated account.
 */
export async function passwordApiKey(
  db: Database,
  realm: Realm,
  username: string,
  password: string,
  limiter: Pick<RateLimiter, "checkLogin" | "failLogin">,
): Promise<{ api_key: string; email: string; user_id: number }> {
  if (realm.deactivated)
    throw new UnauthorizedError(
      "This organization has been deactivated",
      ErrorCode.REALM_DEACTIVATED,
    );
  if (!realm.password_auth_enabled)
    throw new UnauthorizedError(
      "Password authentication is disabled in this organization",
      ErrorCode.PASSWORD_AUTH_DISABLED,
    );
  // Failed logins are counted per account name (any case), whatever address they come from.
  const accountName = `${String(realm.id)}:${username.toLowerCase()}`;
  await limiter.checkLogin(accountName);
  const user =
    password.length > MAX_PASSWORD_LENGTH
      ? undefined
      : await accountByDeliveryEmail(db, realm.id, username);
  const matches =
    password.length <= MAX_PASSWORD_LENGTH &&
    (await checkPassword(password, user?.password ?? null));
  if (user === undefined || !matches) {
    await limiter.failLogin(accountName);
    throw badCredentials();
  }
  if (!user.is_active)
    throw new UnauthorizedError("Account is deactivated", ErrorCode.USER_DEACTIVATED);
  return { api_key: user.api_key, email: user.email, user_id: user.id };
}

/** Sets the password of user `userId` (the admin CLI's `set-password`, the demo seed). */
export async function doSetPassword(tx: Tx, userId: number, password: string): Promise<void> {
  if (password.length < 1 || password.length > MAX_PASSWORD_LENGTH)
    throw new JsonableError(`A password has 1 to ${String(MAX_PASSWORD_LENGTH)} characters`);
  await setPasswordHash(tx, userId, await hashPassword(password));
}

/** What POST /users asks for. */
export interface NewUser {
  email: string;
  password: string;
  fullName: string;
}

/**
 * POST /users: an administrator holding the server-granted
 * `can_create_users` creates a member account with a password, as Zulip's
 * `create_user_backend` (its checks and messages), subscribed to the realm's
 * default channels. One transaction with the `realm_user` `add` and
 * `subscription` events. Returns the new user's id.
 */
export async function doCreateUser(
  db: Database,
  admin: AuthedUser,
  user: NewUser,
): Promise<number> {
  if (!(await canCreateUsers(db, admin.id)))
    throw new JsonableError("User not authorized to create users");
  const fullName = checkFullName(user.fullName);
  const email = user.email.trim();
  if (!z.email().safeParse(email).success) throw new JsonableError("Bad name or username");
  if (user.password.length > MAX_PASSWORD_LENGTH)
    throw new JsonableError(`A password has 1 to ${String(MAX_PASSWORD_LENGTH)} characters`);
  if (!(await isStrongPassword(user.password, [fullName, email])))
    throw new JsonableError("The password is too weak.");
  const hash = await hashPassword(user.password);
  return db.transaction(async (tx) => {
    if (await addressTaken(tx, admin.realm_id, email))
      throw new JsonableError(`Email '${email}' already in use`);
    const { id } = await createAccount(tx, { realmId: admin.realm_id, email, fullName });
    await setPasswordHash(tx, id, hash);
    const defaults = await defaultChannels(tx, admin.realm_id);
    for (const channel of defaults) await activateSubscriptions(tx, channel.id, [id]);
    await announceSubscriptions(
      tx,
      defaults.map((channel) => ({ channel, userIds: [id] })),
    );
    return id;
  });
}

/** GET /users/me/pointer (legacy): the furthest message id the user's clients reported; -1 before any. */
export async function readPointer(db: Database, userId: number): Promise<number> {
  return pointerOf(db, userId);
}

/**
 * POST /users/me/pointer (legacy, removed from Zulip in 2020; zulip-js still
 * calls it): moves the pointer forward to one of the user's messages; an
 * older id leaves it where it is, another's message is `Invalid message ID`.
 */
export async function doUpdatePointer(
  db: Database,
  userId: number,
  pointer: number,
): Promise<void> {
  await db.transaction(async (tx) => {
    if (!(await holdsMessage(tx, userId, pointer))) throw new JsonableError("Invalid message ID");
    await advancePointer(tx, userId, pointer);
  });
}
