/** What the admin CLI's commands share: their shape, errors and argument readers. */
import type { Database } from "../db/database";
import { realmBySubdomain } from "../db/queries/realms";
import { accountByDeliveryEmail, addressTaken } from "../db/queries/users";
import { Role } from "../lib/roles";

/** A mistake in the command line: usage is printed, exit code 2. */
export class UsageError extends Error {}
/** A command that could not be carried out: exit code 1. */
export class CommandError extends Error {}

export const ROLES: Record<string, number> = {
  owner: Role.OWNER,
  administrator: Role.ADMINISTRATOR,
  moderator: Role.MODERATOR,
  member: Role.MEMBER,
  guest: Role.GUEST,
};
export const ROLE_NAMES = Object.fromEntries(Object.entries(ROLES).map(([name, n]) => [n, name]));

export interface Command {
  usage: string;
  summary: string;
  options: Record<string, { type: "string" | "boolean" }>;
  run(
    db: Database,
    values: Record<string, string | boolean | undefined>,
    positionals: string[],
    env: NodeJS.ProcessEnv,
  ): Promise<string>;
}

export function required(
  values: Record<string, string | boolean | undefined>,
  name: string,
): string {
  const value = values[name];
  if (typeof value !== "string" || value.trim() === "")
    throw new UsageError(`--${name} is required`);
  return value.trim();
}

/** `--realm SUB`: a subdomain, or `--realm ""` for the root realm (the demo realm is one). */
export function realmArg(values: Record<string, string | boolean | undefined>): string {
  const value = values.realm;
  if (typeof value !== "string")
    throw new UsageError('--realm is required (--realm "" for the root realm)');
  return value.trim();
}

export async function realmId(db: Database, subdomain: string): Promise<number> {
  const realm = await realmBySubdomain(db, subdomain.toLowerCase());
  if (realm === null) throw new CommandError(`no realm with subdomain "${subdomain}"`);
  return realm.id;
}

export async function userId(db: Database, subdomain: string, email: string): Promise<number> {
  const id = await realmId(db, subdomain);
  const row = await accountByDeliveryEmail(db, id, email);
  if (row === undefined) throw new CommandError(`no user ${email} in realm "${subdomain}"`);
  return row.id;
}

export async function emailFree(db: Database, realm: number, email: string): Promise<void> {
  if (await addressTaken(db, realm, email))
    throw new CommandError(`${email} is already taken in this realm`);
}

export function validEmail(email: string): string {
  if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email))
    throw new UsageError(`"${email}" is not an email address`);
  return email;
}

export const realmOption = { realm: { type: "string" as const } };
