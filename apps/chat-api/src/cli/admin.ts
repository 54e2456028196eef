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
import {
  createAccount,
  doSetPassword,
  doSetRealmActive,
  doSetUserActive,
} from "../actions/accounts";
import { openDatabase } from "../db/open";
import { migrate } from "../db/migrate";
import { apiKeyOf, realmUsers, setCanCreateUsers } from "../db/queries/users";
import type { Database } from "../db/database";
import { CacheBus } from "../caches/cache-bus";
import { isProduction, loadConfig } from "../lib/config";
import {
  type Command,
  CommandError,
  ROLES,
  ROLE_NAMES,
  UsageError,
  emailFree,
  realmArg,
  realmId,
  realmOption,
  required,
  userId,
  validEmail,
} from "./command-kit";
import { realmCommands } from "./realm-commands";

const commands: Record<string, Command> = {
  ...realmCommands,
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
