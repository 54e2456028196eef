import {
  allRealms,
  deleteRealmDomain,
  realmById,
  realmBySubdomain,
  upsertRealmDomain,
} from "../db/queries/realms";
import { OWNER_LINK_LIFETIME_MS, queuePasswordLink } from "../actions/signup";
import { realmUrl } from "../lib/realm-url";
import { apiKeyOf, realmUsers, setCanCreateUsers } from "../db/queries/users";
/**
 * `pnpm --filter chat-api admin <command>`: administer chat-api from a shell.
 * Works on the database the environment names (DATABASE_URL, else the embedded
 * one under CHAT_DATA_DIR). Changes announce themselves to running servers
 * through PostgreSQL NOTIFY, so a deactivation takes effect on every replica at once.
 */
import { readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { parseArgs } from "node:util";
import pino from "pino";
import { doSetRealmActive, doSetUserActive } from "../actions/accounts";
import { openDatabase } from "../db/open";
import { migrate } from "../db/migrate";
import { createAccount, doSetPassword } from "../actions/accounts";
import { createRealm } from "../actions/realm-creation";
import { Role } from "../lib/roles";
import { createUploadStore } from "../lib/upload-store";
import { ImportError, importRealm } from "../actions/realm-import";
import type { Database } from "../db/database";
import { CacheBus } from "../caches/cache-bus";
import { isProduction, loadConfig } from "../lib/config";
import { accountByDeliveryEmail, addressTaken } from "../db/queries/users";

/** A mistake in the command line: usage is printed, exit code 2. */
class UsageError extends Error {}
/** A command that could not be carried out: exit code 1. */
class CommandError extends Error {}

const ROLES: Record<string, number> = {
  owner: Role.OWNER,
  administrator: Role.ADMINISTRATOR,
  moderator: Role.MODERATOR,
  member: Role.MEMBER,
  guest: Role.GUEST,
};
const ROLE_NAMES = Object.fromEntries(Object.entries(ROLES).map(([name, n]) => [n, name]));

interface Command {
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

function required(values: Record<string, string | boolean | undefined>, name: string): string {
  const value = values[name];
  if (typeof value !== "string" || value.trim() === "")
    throw new UsageError(`--${name} is required`);
  return value.trim();
}

/** `--realm SUB`: a subdomain, or `--realm ""` for the root realm (the demo realm is one). */
function realmArg(values: Record<string, string | boolean | undefined>): string {
  const value = values.realm;
  if (typeof value !== "string")
    throw new UsageError('--realm is required (--realm "" for the root realm)');
  return value.trim();
}

async function realmId(db: Database, subdomain: string): Promise<number> {
  const realm = await realmBySubdomain(db, subdomain.toLowerCase());
  if (realm === null) throw new CommandError(`no realm with subdomain "${subdomain}"`);
  return realm.id;
}

async function userId(db: Database, subdomain: string, email: string): Promise<number> {
  const id = await realmId(db, subdomain);
  const row = await accountByDeliveryEmail(db, id, email);
  if (row === undefined) throw new CommandError(`no user ${email} in realm "${subdomain}"`);
  return row.id;
}

async function emailFree(db: Database, realm: number, email: string): Promise<void> {
  if (await addressTaken(db, realm, email))
    throw new CommandError(`${email} is already taken in this realm`);
}

function validEmail(email: string): string {
  if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email))
    throw new UsageError(`"${email}" is not an email address`);
  return email;
}

const realmOption = { realm: { type: "string" as const } };

const commands: Record<string, Command> = {
  "import-realm": {
    usage: "import-realm ARCHIVE",
    summary:
      "Load a data export (POST /export/realm's .tar.gz) into an empty server, ids and files kept",
    options: {},
    async run(db, _values, positionals, env) {
      const [archive, ...extra] = positionals;
      if (archive === undefined || extra.length > 0)
        throw new UsageError("give exactly one archive");
      const uploads = createUploadStore(loadConfig(env));
      try {
        const done = await importRealm(db, uploads, archive);
        return `imported realm ${String(done.realmId)} (subdomain "${done.subdomain}"): ${String(done.users)} people, ${String(done.channels)} channels, ${String(done.messages)} messages, ${String(done.files)} files; every account has a new API key and no password`;
      } catch (error) {
        if (error instanceof ImportError) throw new CommandError(error.message);
        throw error;
      }
    },
  },
  "create-realm": {
    usage:
      "create-realm --subdomain SUB --name NAME [--description TEXT] [--owner-email EMAIL --owner-name NAME]",
    summary:
      "Create a realm (organization) with its system groups, and its owner, who is e-mailed a link to choose a password; --subdomain '' is the root realm",
    options: {
      subdomain: { type: "string" },
      name: { type: "string" },
      description: { type: "string" },
      "owner-email": { type: "string" },
      "owner-name": { type: "string" },
    },
    async run(db, values, _positionals, env) {
      const subdomain =
        typeof values.subdomain === "string" ? values.subdomain.trim().toLowerCase() : undefined;
      if (subdomain === undefined) throw new UsageError("--subdomain is required");
      if (subdomain !== "" && !/^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/.test(subdomain)) {
        throw new UsageError(`"${subdomain}" is not a valid subdomain (letters, digits, hyphens)`);
      }
      const name = required(values, "name");
      if (name.length > 40) throw new UsageError("--name is too long (limit: 40 characters)");
      const ownerEmail =
        values["owner-email"] === undefined
          ? undefined
          : validEmail(required(values, "owner-email"));
      const ownerName = ownerEmail === undefined ? undefined : required(values, "owner-name");
      if (ownerEmail === undefined && values["owner-name"] !== undefined)
        throw new UsageError("--owner-name goes with --owner-email");
      if ((await realmBySubdomain(db, subdomain)) !== null) {
        throw new CommandError(`a realm with subdomain "${subdomain}" already exists`);
      }
      const description = typeof values.description === "string" ? values.description : "";
      const url = realmUrl(loadConfig(env), { subdomain });
      const made = await db.transaction(async (tx) => {
        const { realmId: id } = await createRealm(tx, { subdomain, name, description });
        if (ownerEmail === undefined || ownerName === undefined) return { id, link: undefined };
        const owner = await createAccount(tx, {
          realmId: id,
          email: ownerEmail,
          fullName: ownerName,
          role: Role.OWNER,
        });
        const realm = await realmById(tx, id);
        const link = await queuePasswordLink(
          tx,
          realm,
          { id: owner.id, delivery_email: ownerEmail },
          url,
          OWNER_LINK_LIFETIME_MS,
          true,
        );
        return { id, link };
      });
      const created = `created realm ${made.id} "${name}" (subdomain "${subdomain}") at ${url}`;
      if (made.link === undefined) return created;
      return `${created}\nowner ${ownerEmail ?? ""}: e-mailed a link to choose a password (it works once, for a week):\n${made.link}`;
    },
  },
  "realm-domain": {
    usage: "realm-domain --realm SUB (--add DOMAIN [--allow-subdomains] | --remove DOMAIN)",
    summary:
      "Add or remove a domain whose addresses may sign up when the realm restricts sign-up to its domains",
    options: {
      ...realmOption,
      add: { type: "string" },
      remove: { type: "string" },
      "allow-subdomains": { type: "boolean" },
    },
    async run(db, values) {
      const realm = await realmId(db, realmArg(values));
      const add = typeof values.add === "string" ? values.add.trim().toLowerCase() : undefined;
      const remove =
        typeof values.remove === "string" ? values.remove.trim().toLowerCase() : undefined;
      if ((add === undefined) === (remove === undefined))
        throw new UsageError("give one of --add DOMAIN and --remove DOMAIN");
      const domain = add ?? remove ?? "";
      if (
        !/^([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/.test(domain) ||
        domain.length > 80
      )
        throw new UsageError(`"${domain}" is not a domain`);
      if (add !== undefined) {
        const subdomains = values["allow-subdomains"] === true;
        await db.transaction((tx) => upsertRealmDomain(tx, realm, domain, subdomains));
        return `added ${domain}${subdomains ? " and its subdomains" : ""}`;
      }
      const removed = await db.transaction((tx) => deleteRealmDomain(tx, realm, domain));
      if (!removed) throw new CommandError(`${domain} is not one of the realm's domains`);
      return `removed ${domain}`;
    },
  },
  "create-user": {
    usage:
      "create-user --realm SUB --email EMAIL --name NAME [--role owner|administrator|moderator|member|guest]",
    summary: "Create a user and print its API key",
    options: {
      ...realmOption,
      email: { type: "string" },
      name: { type: "string" },
      role: { type: "string" },
    },
    async run(db, values) {
      const realm = await realmId(db, realmArg(values));
      const email = validEmail(required(values, "email"));
      const roleName = typeof values.role === "string" ? values.role : "member";
      const role = ROLES[roleName];
      if (role === undefined)
        throw new UsageError(`--role must be one of ${Object.keys(ROLES).join(", ")}`);
      await emailFree(db, realm, email);
      const user = await db.transaction((tx) =>
        createAccount(tx, { realmId: realm, email, fullName: required(values, "name"), role }),
      );
      return `created user ${user.id} ${email} (${roleName}); API key: ${user.apiKey}`;
    },
  },
  "set-can-create-users": {
    usage: "set-can-create-users --realm SUB --email EMAIL [--off]",
    summary:
      "Let an administrator create accounts through the API (POST /users), or stop them with --off",
    options: { ...realmOption, email: { type: "string" }, off: { type: "boolean" } },
    async run(db, values) {
      const email = required(values, "email");
      const id = await userId(db, realmArg(values), email);
      const granted = values.off !== true;
      await db.transaction((tx) => setCanCreateUsers(tx, id, granted));
      return `${email} ${granted ? "may" : "may no longer"} create users`;
    },
  },
  "create-bot": {
    usage: "create-bot --realm SUB --email EMAIL --name NAME --owner OWNER_EMAIL",
    summary: "Create a generic bot owned by a user and print its API key",
    options: {
      ...realmOption,
      email: { type: "string" },
      name: { type: "string" },
      owner: { type: "string" },
    },
    async run(db, values) {
      const subdomain = realmArg(values);
      const realm = await realmId(db, subdomain);
      const email = validEmail(required(values, "email"));
      const owner = await userId(db, subdomain, required(values, "owner"));
      await emailFree(db, realm, email);
      const bot = await db.transaction((tx) =>
        createAccount(tx, {
          realmId: realm,
          email,
          fullName: required(values, "name"),
          bot: { ownerId: owner },
        }),
      );
      return `created bot ${bot.id} ${email}; API key: ${bot.apiKey}`;
    },
  },
  deactivate: {
    usage: "deactivate user EMAIL --realm SUB | deactivate realm SUB",
    summary:
      "Deactivate a user, a bot or a realm; their API keys stop working on every server at once",
    options: realmOption,
    run: (db, values, args) => setActive(db, values, args, false),
  },
  reactivate: {
    usage: "reactivate user EMAIL --realm SUB | reactivate realm SUB",
    summary: "Reactivate a user, a bot or a realm",
    options: realmOption,
    run: (db, values, args) => setActive(db, values, args, true),
  },
  "api-key": {
    usage: "api-key --realm SUB --email EMAIL",
    summary: "Print a user's or bot's API key",
    options: { ...realmOption, email: { type: "string" } },
    async run(db, values) {
      const id = await userId(db, realmArg(values), required(values, "email"));
      return apiKeyOf(db, id);
    },
  },
  "set-password": {
    usage: "set-password --realm SUB --email EMAIL --password-file FILE",
    summary:
      "Set a user's password (for POST /fetch_api_key) from the first line of FILE ('-': standard input)",
    options: { ...realmOption, email: { type: "string" }, "password-file": { type: "string" } },
    async run(db, values) {
      const file = required(values, "password-file");
      // Standard input is read whole: a CLI run, not a server's event loop.
      const text = file === "-" ? readFileSync(0, "utf8") : await readFile(file, "utf8");
      const password = text.split(/\r?\n/, 1)[0] ?? "";
      if (password === "") throw new CommandError(`${file}: the first line is empty`);
      const email = required(values, "email");
      const id = await userId(db, realmArg(values), email);
      await db.transaction((tx) => doSetPassword(tx, id, password));
      return `password set for ${email}`;
    },
  },
  "list-realms": {
    usage: "list-realms",
    summary: "List realms: id, subdomain, name, state",
    options: {},
    async run(db) {
      const realms = await allRealms(db);
      return realms
        .map(
          (r) =>
            `${r.id}\t${r.subdomain === "" ? '""' : r.subdomain}\t${r.name}\t${r.deactivated ? "deactivated" : "active"}`,
        )
        .join("\n");
    },
  },
  "list-users": {
    usage: "list-users --realm SUB",
    summary: "List a realm's users and bots: id, email, name, role, kind, state",
    options: realmOption,
    async run(db, values) {
      const realm = await realmId(db, realmArg(values));
      const users = await realmUsers(db, realm, false);
      return users
        .map((u) =>
          [
            u.id,
            u.delivery_email,
            u.full_name,
            ROLE_NAMES[u.role] ?? u.role,
            u.is_bot ? "bot" : "human",
            u.is_active ? "active" : "deactivated",
          ].join("\t"),
        )
        .join("\n");
    },
  },
};

async function setActive(
  db: Database,
  values: Record<string, string | boolean | undefined>,
  args: string[],
  active: boolean,
): Promise<string> {
  const [kind, target] = args;
  if (target === undefined || (kind !== "user" && kind !== "realm")) {
    throw new UsageError("say what: user EMAIL --realm SUB, or realm SUB");
  }
  const bus = new CacheBus(db.sql, pino({ level: "silent" }));
  const verb = active ? "reactivated" : "deactivated";
  if (kind === "realm") {
    await doSetRealmActive({ db, bus }, await realmId(db, target), active);
    return `${verb} realm "${target}"`;
  }
  await doSetUserActive({ db, bus }, await userId(db, realmArg(values), target), active);
  return `${verb} ${target}`;
}

function help(): string {
  const lines = Object.entries(commands).map(([name, c]) => `  ${name.padEnd(14)} ${c.summary}`);
  return [
    "usage: admin <command> [options]   (admin <command> --help for its options)",
    "",
    ...lines,
  ].join("\n");
}

/**
 * Runs the CLI on `argv`; returns the exit code (0 done, 1 failed, 2 usage).
 * It opens (and migrates, outside production) the database the configuration in
 * `env` names and closes it at the end, unless given an open `database`, which it
 * uses as it is and leaves open (tests run many commands on one database).
 */
export async function runAdmin(
  argv: string[],
  out: (text: string) => void,
  err: (text: string) => void,
  env: NodeJS.ProcessEnv = process.env,
  database?: Database,
): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === "--help" || name === "-h" || name === "help") {
    out(help());
    return name === undefined ? 2 : 0;
  }
  const command = commands[name];
  if (command === undefined) {
    err(`unknown command "${name}"\n\n${help()}`);
    return 2;
  }
  let parsed: { values: Record<string, string | boolean | undefined>; positionals: string[] };
  try {
    parsed = parseArgs({
      args: rest,
      options: { ...command.options, help: { type: "boolean", short: "h" } },
      allowPositionals: true,
      strict: true,
    });
  } catch (error) {
    err(`${error instanceof Error ? error.message : String(error)}\nusage: admin ${command.usage}`);
    return 2;
  }
  if (parsed.values.help === true) {
    out(`usage: admin ${command.usage}\n\n${command.summary}`);
    return 0;
  }
  let opened: Database | undefined;
  try {
    let db = database;
    if (db === undefined) {
      const config = loadConfig(env);
      db = opened = await openDatabase(config);
      if (!isProduction(config)) await migrate(db.sql);
    }
    out(await command.run(db, parsed.values, parsed.positionals, env));
    return 0;
  } catch (error) {
    if (error instanceof UsageError) {
      err(`${error.message}\nusage: admin ${command.usage}`);
      return 2;
    }
    err(`error: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  } finally {
    await opened?.close();
  }
}

if (require.main === module) {
  void runAdmin(
    process.argv.slice(2),
    (text) => process.stdout.write(`${text}\n`),
    (text) => process.stderr.write(`${text}\n`),
  ).then((code) => {
    process.exitCode = code;
  });
}
