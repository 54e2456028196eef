import { doSetRealmActive, doSetUserActive } from "../src/actions/accounts";
import { createAccount } from "../src/actions/accounts";
import { createRealm } from "../src/actions/realm-creation";
import type { Operation } from "../src/http/typed-endpoint";
import { Role } from "../src/lib/roles";
import { buildApi } from "../src/urls";
import { type Person, type TestServer, createOtherRealm, startTestServer } from "./support/server";

/**
 * Every authenticated operation against every kind of caller. The
 * authentication kinds get the contract's 401 from every operation; the role
 * kinds get the operation's access answer (bots, guests, administrators,
 * owners) exactly when its declaration refuses them, and never otherwise.
 */
let server: TestServer;
let operations: Operation[];
const callers: Record<string, Person> = {};
let foreignRealmUser: Person;
let deactivatedRealmUser: Person;

beforeAll(async () => {
  server = await startTestServer({ env: { CHAT_RATE_LIMIT: "false" } });
  operations = buildApi(server.services).operations.filter((o) => o.auth === "user");
  for (const who of ["desdemona", "iago", "prospero", "hamlet", "polonius", "hamlet-bot"])
    callers[who] = await server.person(who);
  const realm = await server.db.prisma.realm.findFirstOrThrow({ where: { subdomain: "" } });
  callers.deactivated = await server.db.transaction(async (tx) => {
    const account = await createAccount(tx, {
      realmId: realm.id,
      email: "yorick@example.com",
      fullName: "Yorick",
    });
    return { id: account.id, email: "yorick@example.com", apiKey: account.apiKey };
  });
  await doSetUserActive(server.services, callers.deactivated.id, false);
  foreignRealmUser = (await createOtherRealm(server)).outsider;
  const closed = await server.db.transaction(async (tx) => {
    const { realmId } = await createRealm(tx, { subdomain: "denmark", name: "Old Denmark" });
    const account = await createAccount(tx, {
      realmId,
      email: "ghost@example.com",
      fullName: "Ghost",
      role: Role.OWNER,
    });
    return {
      realmId,
      person: { id: account.id, email: "ghost@example.com", apiKey: account.apiKey },
    };
  });
  deactivatedRealmUser = closed.person;
  await doSetRealmActive(server.services, closed.realmId, false);
});

afterAll(() => server.close());

/** Row counts of the tables operations write: equal before and after refused calls. */
async function digest(): Promise<Record<string, number>> {
  const tables = [
    "channels",
    "subscriptions",
    "user_groups",
    "user_topics",
    "drafts",
    "saved_snippets",
    "messages",
    "reminders",
    "invitations",
    "linkifiers",
    "custom_profile_fields",
    "devices",
    "event_queues",
    "presences",
    "users",
  ];
  const rows = await server.db.sql.query<{ name: string; count: string }>(
    tables
      .map((t) => `SELECT '${t}' AS name, count(*)::text AS count FROM ${t}`)
      .join(" UNION ALL "),
  );
  return Object.fromEntries(rows.map((r) => [r.name, Number(r.count)]));
}

const pathOf = (operation: Operation) => `/api/v1${operation.path.replace(/\{\w+\}/g, "1")}`;
const unauthorized = (msg: string) => ({ result: "error", msg, code: "UNAUTHORIZED" });

describe("authentication, for every authenticated operation", () => {
  const kinds: [string, () => { auth?: readonly [string, string]; host?: string }, string][] = [
    ["no credentials", () => ({}), "Not logged in: API authentication or user session required"],
    [
      "a bad key",
      () => ({ auth: [callers.hamlet?.email ?? "", "A".repeat(32)] }),
      "Invalid API key",
    ],
    [
      "a deactivated user",
      () => ({ auth: [callers.deactivated?.email ?? "", callers.deactivated?.apiKey ?? ""] }),
      "Account is deactivated",
    ],
    [
      "a user of a deactivated realm",
      () => ({
        auth: [deactivatedRealmUser.email, deactivatedRealmUser.apiKey],
        host: "denmark.chat.test",
      }),
      "This organization has been deactivated",
    ],
    [
      "a user of another realm",
      () => ({ auth: [foreignRealmUser.email, foreignRealmUser.apiKey] }),
      "Account is not associated with this subdomain",
    ],
  ];

  it.each(kinds)(
    "%s gets the contract's 401 from each, and changes nothing",
    async (_kind, options, msg) => {
      const before = await digest();
      const wrong: string[] = [];
      for (const operation of operations) {
        const reply = await server.call(operation.method, pathOf(operation), options());
        const ok =
          reply.status === 401 &&
          JSON.stringify(reply.body) === JSON.stringify(unauthorized(msg)) &&
          reply.headers["www-authenticate"] === 'Basic realm="zulip"';
        if (!ok) wrong.push(`${operation.method} ${operation.path}: ${reply.status} ${reply.text}`);
      }
      expect(wrong).toEqual([]);
      expect(operations.length).toBeGreaterThan(50);
      expect(await digest()).toEqual(before);
    },
  );
});

describe("roles, for every operation with access rules", () => {
  /** The access answer `who` must get from `operation`, or undefined when it may call it. */
  function expected(operation: Operation, who: string): object | undefined {
    const role =
      { desdemona: 100, iago: 200, prospero: 300, hamlet: 400, polonius: 600, "hamlet-bot": 400 }[
        who
      ] ?? 400;
    if (operation.access.bots === false && who === "hamlet-bot")
      return {
        result: "error",
        msg: "This endpoint does not accept bot requests.",
        code: "BAD_REQUEST",
      };
    if (operation.access.guests === false && role === 600)
      return { result: "error", msg: "Not allowed for guest users", code: "BAD_REQUEST" };
    if (operation.access.role === "owner" && role > 100)
      return {
        result: "error",
        msg: "Must be an organization owner",
        code: "UNAUTHORIZED_PRINCIPAL",
      };
    if (operation.access.role === "administrator" && role > 200)
      return {
        result: "error",
        msg: "Must be an organization administrator",
        code: "UNAUTHORIZED_PRINCIPAL",
      };
    return undefined;
  }

  it.each(["desdemona", "iago", "prospero", "hamlet", "polonius", "hamlet-bot"])(
    "%s gets exactly the access answers the declarations give",
    async (who) => {
      const person = callers[who];
      if (person === undefined) throw new Error(who);
      const wrong: string[] = [];
      let refused = 0;
      for (const operation of operations) {
        const reply = await server.call(operation.method, pathOf(operation), {
          auth: [person.email, person.apiKey],
        });
        // DELETE /users/me ends the caller's account and their bots': they come back for the next operation.
        if (
          operation.method === "DELETE" &&
          operation.path === "/users/me" &&
          reply.status === 200
        ) {
          const bots = await server.db.prisma.user.findMany({ where: { bot_owner_id: person.id } });
          for (const id of [person.id, ...bots.map((b) => b.id)])
            await doSetUserActive(server.services, id, true);
        }
        const answer = expected(operation, who);
        if (answer !== undefined) {
          refused++;
          if (reply.status !== 400 || JSON.stringify(reply.body) !== JSON.stringify(answer))
            wrong.push(`${operation.method} ${operation.path}: ${reply.status} ${reply.text}`);
        } else if (reply.status === 401) {
          // Allowed callers may be refused by the operation's own rules, never by authentication.
          wrong.push(`${operation.method} ${operation.path}: ${reply.text}`);
        }
        if (reply.status >= 500)
          wrong.push(`${operation.method} ${operation.path}: ${reply.status}`);
      }
      expect(wrong).toEqual([]);
      if (who === "hamlet-bot" || who === "polonius" || who === "hamlet")
        expect(refused).toBeGreaterThan(0);
    },
  );
});
