/** The admin CLI's commands on organizations: create, list, import, sign-up domains. */
import { allRealms, realmById, realmBySubdomain } from "../db/queries/realms";
import { OWNER_LINK_LIFETIME_MS } from "../actions/confirmation-links";
import { queuePasswordLink } from "../actions/password-reset";
import { createAccount } from "../actions/accounts";
import { createRealm } from "../actions/realm-creation";
import { doRemoveRealmDomain, doSetRealmDomain } from "../actions/realm-domains";
import { ImportError, importRealm } from "../actions/realm-import";
import { loadConfig } from "../lib/config";
import { realmUrl } from "../lib/realm-url";
import { Role } from "../lib/roles";
import { createUploadStore } from "../lib/upload-store";
import {
  type Command,
  CommandError,
  UsageError,
  realmArg,
  realmId,
  realmOption,
  required,
  validEmail,
} from "./command-kit";

export const realmCommands: Record<string, Command> = {
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
        const done = await doSetRealmDomain(db, realm, domain, subdomains);
        return `${done} ${domain}${subdomains ? " and its subdomains" : ""}`;
      }
      if (!(await doRemoveRealmDomain(db, realm, domain)))
        throw new CommandError(`${domain} is not one of the realm's domains`);
      return `removed ${domain}`;
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
};
