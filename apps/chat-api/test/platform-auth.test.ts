import { doSetRealmActive, doSetUserActive } from "../src/actions/accounts";
import { generateApiKey } from "../src/actions/accounts";
import { createRealm } from "../src/actions/realm-creation";
import { type Person, type TestServer, startTestServer } from "./support/server";
import { testApi } from "./support/test-api";

let server: TestServer;
let hamlet: Person;

beforeAll(async () => {
  server = await startTestServer({ api: testApi });
  hamlet = await server.person("hamlet");
});

afterAll(() => server.close());

const basic = (text: string) => `Basic ${Buffer.from(text).toString("base64")}`;
const whoami = (auth?: readonly [string, string] | string, host?: string) =>
  server.call("GET", "/api/v1/test/whoami", {
    ...(auth === undefined ? {} : { auth }),
    ...(host === undefined ? {} : { host }),
  });

function expectError(
  reply: Awaited<ReturnType<typeof whoami>>,
  status: number,
  code: string,
  msg: string,
): void {
  expect([reply.status, reply.body]).toEqual([status, { result: "error", msg, code }]);
  if (status === 401) expect(reply.headers["www-authenticate"]).toBe('Basic realm="zulip"');
  else expect(reply.headers["www-authenticate"]).toBeUndefined();
}

describe("authentication, row by row", () => {
  it("accepts the right email and key", async () => {
    const reply = await whoami([hamlet.email, hamlet.apiKey]);
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({ result: "success", msg: "", user_id: hamlet.id, realm: "Demo" });
  });

  it("compares the email case-insensitively and strips whitespace", async () => {
    expect((await whoami([`  HAMLET@Example.COM `, ` ${hamlet.apiKey} `])).status).toBe(200);
  });

  it("401 without an Authorization header", async () => {
    expectError(
      await whoami(),
      401,
      "UNAUTHORIZED",
      "Not logged in: API authentication or user session required",
    );
  });

  it("400 for a scheme other than Basic", async () => {
    expectError(
      await whoami("Bearer abc"),
      400,
      "BAD_REQUEST",
      "This endpoint requires HTTP basic authentication.",
    );
  });

  it.each([
    "Basic !!!",
    basic("no-colon-here"),
    "Basic",
    `Basic ${Buffer.from([0xff, 0xfe, 0x3a]).toString("base64")}`,
  ])("401 for an undecodable Basic value (%s)", async (header) => {
    expectError(
      await whoami(header),
      401,
      "UNAUTHORIZED",
      "Invalid authorization header for basic auth",
    );
  });

  it.each(["short", "x".repeat(33), `${"a".repeat(31)}!`])(
    "401 for a key that is not 32 alphanumerics (%s)",
    async (key) => {
      expectError(await whoami([hamlet.email, key]), 401, "UNAUTHORIZED", "Malformed API key");
    },
  );

  it("401 for an unknown key", async () => {
    expectError(
      await whoami([hamlet.email, generateApiKey()]),
      401,
      "UNAUTHORIZED",
      "Invalid API key",
    );
  });

  it("401 for the key of another email", async () => {
    const othello = await server.person("othello");
    expectError(
      await whoami([othello.email, hamlet.apiKey]),
      401,
      "UNAUTHORIZED",
      "Invalid API key",
    );
  });

  it("401 for a deactivated user, and back once reactivated", async () => {
    const cordelia = await server.person("cordelia");
    expect((await whoami([cordelia.email, cordelia.apiKey])).status).toBe(200);
    await doSetUserActive(server.services, cordelia.id, false);
    expectError(
      await whoami([cordelia.email, cordelia.apiKey]),
      401,
      "UNAUTHORIZED",
      "Account is deactivated",
    );
    await doSetUserActive(server.services, cordelia.id, true);
    expect((await whoami([cordelia.email, cordelia.apiKey])).status).toBe(200);
  });

  describe("realms", () => {
    let other: { realmId: number; user: Person };

    beforeAll(async () => {
      const realmId = await server.db.transaction(async (tx) => {
        const { realmId: id } = await createRealm(tx, { subdomain: "lear", name: "Lear" });
        return id;
      });
      const apiKey = generateApiKey();
      const user = await server.db.prisma.user.create({
        data: {
          realm_id: realmId,
          email: "goneril@example.com",
          delivery_email: "goneril@example.com",
          full_name: "Goneril",
          api_key: apiKey,
        },
      });
      other = { realmId, user: { id: user.id, email: user.email, apiKey } };
    });

    it("authenticates a user of a subdomain realm on its own host", async () => {
      const reply = await whoami([other.user.email, other.user.apiKey], "lear.chat.test");
      expect(reply.body).toMatchObject({ user_id: other.user.id, realm: "Lear" });
    });

    it("ignores the port and the case of the host", async () => {
      expect(
        (await whoami([other.user.email, other.user.apiKey], "LEAR.Chat.Test:8080")).status,
      ).toBe(200);
    });

    it("401 for a user of another realm than the request's host", async () => {
      const msg = "Account is not associated with this subdomain";
      expectError(
        await whoami([other.user.email, other.user.apiKey], "chat.test"),
        401,
        "UNAUTHORIZED",
        msg,
      );
      expectError(
        await whoami([hamlet.email, hamlet.apiKey], "lear.chat.test"),
        401,
        "UNAUTHORIZED",
        msg,
      );
    });

    it("401 on a subdomain that no realm has", async () => {
      const msg = "Account is not associated with this subdomain";
      expectError(
        await whoami([hamlet.email, hamlet.apiKey], "nowhere.chat.test"),
        401,
        "UNAUTHORIZED",
        msg,
      );
    });

    it("401 for a user of a deactivated realm", async () => {
      await doSetRealmActive(server.services, other.realmId, false);
      const reply = await whoami([other.user.email, other.user.apiKey], "lear.chat.test");
      expectError(reply, 401, "UNAUTHORIZED", "This organization has been deactivated");
      await doSetRealmActive(server.services, other.realmId, true);
      expect((await whoami([other.user.email, other.user.apiKey], "lear.chat.test")).status).toBe(
        200,
      );
    });

    it.each([
      ["chat.test", "Demo", ""],
      ["127.0.0.1:9991", "Demo", ""],
      ["[::1]:9991", "Demo", ""],
      ["elsewhere.example", "Demo", ""],
      ["lear.chat.test", "Lear", "lear"],
      ["nowhere.chat.test", null, "nowhere"],
    ])("selects the realm from Host %s", async (host, realm, subdomain) => {
      const reply = await server.call("GET", "/api/v1/test/realm", { host });
      expect(reply.body).toMatchObject({ realm, subdomain });
    });
  });
});

describe("who may call", () => {
  it("refuses bots where bots are not accepted", async () => {
    const bot = await server.db.prisma.user.findFirstOrThrow({
      where: { email: "hamlet-bot@example.com" },
    });
    const reply = await server.call("GET", "/api/v1/test/humans", {
      auth: [bot.email, bot.api_key],
    });
    expect(reply.body).toEqual({
      result: "error",
      msg: "This endpoint does not accept bot requests.",
      code: "BAD_REQUEST",
    });
  });

  it("refuses guests where guests are not allowed", async () => {
    const polonius = await server.person("polonius");
    const reply = await server.call("GET", "/api/v1/test/members", {
      auth: [polonius.email, polonius.apiKey],
    });
    expect([reply.status, reply.body]).toEqual([
      400,
      { result: "error", msg: "Not allowed for guest users", code: "BAD_REQUEST" },
    ]);
  });

  it("refuses non-administrators and non-owners with UNAUTHORIZED_PRINCIPAL", async () => {
    const iago = await server.person("iago");
    const admin = await server.call("GET", "/api/v1/test/admins", {
      auth: [iago.email, iago.apiKey],
    });
    expect(admin.status).toBe(200);
    const owners = await server.call("GET", "/api/v1/test/owners", {
      auth: [iago.email, iago.apiKey],
    });
    expect(owners.body).toEqual({
      result: "error",
      msg: "Must be an organization owner",
      code: "UNAUTHORIZED_PRINCIPAL",
    });
    const member = await server.call("GET", "/api/v1/test/admins", {
      auth: [hamlet.email, hamlet.apiKey],
    });
    expect(member.body).toEqual({
      result: "error",
      msg: "Must be an organization administrator",
      code: "UNAUTHORIZED_PRINCIPAL",
    });
  });
});
