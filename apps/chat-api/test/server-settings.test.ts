import { CHAT_FEATURE_LEVEL } from "@repo/feature-levels";
import { doSetRealmActive, doSetUserActive } from "../src/actions/accounts";
import { type TestServer, startTestServer } from "./support/server";
import { zulipResponseSchema } from "./support/zulip-schema";

const validateSettings = zulipResponseSchema("subset", "/server_settings", "get");

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({
    env: {
      CHAT_WEB_PUBLIC_STREAMS_ENABLED: "true",
      CHAT_MINIMUM_CLIENT_VERSIONS: "ZulipMobile=27.190,ZulipTerminal=0.7",
    },
  });
});

afterAll(() => server.close());

describe("GET /api/v1/server_settings", () => {
  it("answers with every field, valid against Zulip's schema, for the root realm", async () => {
    const reply = await server.call("GET", "/api/v1/server_settings");
    expect(reply.status).toBe(200);
    expect(validateSettings(reply.body)).toEqual([]);
    // The validator does reject what Zulip's schema forbids.
    expect(validateSettings({ ...reply.body, zulip_feature_level: "496" })).not.toEqual([]);
    expect(validateSettings({ ...reply.body, chat_feature_level: "496" })).not.toEqual([]);
    expect(validateSettings({ ...reply.body, password_min_length: "6" })).not.toEqual([]);
    expect(reply.body).toMatchObject({
      result: "success",
      msg: "",
      chat_feature_level: CHAT_FEATURE_LEVEL,
      chat_version: "0.1.0",
      chat_merge_base: "0.1.0",
      // Zulip's names too, which real clients read (the Python library asserts zulip_version).
      zulip_feature_level: CHAT_FEATURE_LEVEL,
      zulip_version: "0.1.0",
      zulip_merge_base: "0.1.0",
      push_notifications_enabled: false,
      is_incompatible: false,
      password_min_length: 6,
      password_min_guesses: 10000,
      email_auth_enabled: true,
      require_email_format_usernames: true,
      realm_url: "http://chat.test",
      realm_uri: "http://chat.test",
      realm_name: "Demo",
      realm_icon: "http://chat.test/static/images/default-realm-icon.png",
      realm_description: "<p>The demo organization of chat-api: characters from Shakespeare.</p>",
      realm_web_public_access_enabled: false,
      external_authentication_methods: [],
    });
    expect(reply.body.authentication_methods).toEqual({
      password: true,
      dev: true,
      email: false,
      ldap: false,
      remoteuser: false,
      github: false,
      azuread: false,
      gitlab: false,
      apple: false,
      google: false,
      saml: false,
      "openid connect": false,
      discord: false,
    });
  });

  it("leaves out the realm fields on a host no realm has, still valid", async () => {
    const reply = await server.call("GET", "/api/v1/server_settings", {
      host: "nowhere.chat.test",
    });
    expect(validateSettings(reply.body)).toEqual([]);
    expect(
      Object.keys(reply.body).filter(
        (key) => key.startsWith("realm_") || key === "email_auth_enabled",
      ),
    ).toEqual([]);
    expect(reply.body.chat_feature_level).toBe(CHAT_FEATURE_LEVEL);
  });

  it("reports web-public access only with the server setting, the realm's setting and a web-public channel", async () => {
    const realm = await server.db.prisma.realm.findFirstOrThrow();
    await server.db.prisma.realm.update({
      where: { id: realm.id },
      data: { enable_spectator_access: true },
    });
    server.services.bus.apply({ realm: realm.id });
    const without = await server.call("GET", "/api/v1/server_settings");
    expect(without.body.realm_web_public_access_enabled).toBe(false);
    await server.db.prisma.channel.updateMany({
      where: { name: "Scotland" },
      data: { is_web_public: true },
    });
    const with_ = await server.call("GET", "/api/v1/server_settings");
    expect(with_.body.realm_web_public_access_enabled).toBe(true);
  });

  it.each([
    ["ZulipMobile/27.100 (Android 14)", true],
    ["ZulipMobile/27.190 (iOS 17)", false],
    ["ZulipMobile/28.1", false],
    ["ZulipTerminal/0.6.9", true],
    ["curl/8.0", false],
    ["", false],
  ])("says is_incompatible for User-Agent %j: %s", async (userAgent, incompatible) => {
    const reply = await server.call("GET", "/api/v1/server_settings", {
      headers: { "user-agent": userAgent },
    });
    expect(reply.body.is_incompatible).toBe(incompatible);
  });

  it("answers other methods with 405", async () => {
    const reply = await server.call("POST", "/api/v1/server_settings");
    expect([reply.status, reply.headers.allow, reply.body.allowed_methods]).toEqual([
      405,
      "GET, HEAD",
      ["GET", "HEAD"],
    ]);
  });

  it("reports push notifications when a push service is configured", async () => {
    const other = await startTestServer({ env: { CHAT_PUSH_BOUNCER_URL: "http://127.0.0.1:9/" } });
    try {
      expect(
        (await other.call("GET", "/api/v1/server_settings")).body.push_notifications_enabled,
      ).toBe(true);
    } finally {
      await other.close();
    }
  });
});

describe("POST /api/v1/dev_fetch_api_key", () => {
  const fetchKey = (username: string, host?: string) =>
    server.call("POST", "/api/v1/dev_fetch_api_key", {
      form: { username },
      ...(host === undefined ? {} : { host }),
    });

  it("returns a user's key, email and id in development", async () => {
    const hamlet = await server.person("hamlet");
    const reply = await fetchKey("Hamlet@Example.com");
    expect(reply.body).toEqual({
      result: "success",
      msg: "",
      api_key: hamlet.apiKey,
      email: hamlet.email,
      user_id: hamlet.id,
    });
    const me = await server.call("GET", "/api/v1/users/me", {
      auth: [hamlet.email, reply.body.api_key as string],
    });
    expect(me.body.user_id).toBe(hamlet.id);
  });

  it("401 AUTHENTICATION_FAILED for an unknown user", async () => {
    const reply = await fetchKey("nobody@example.com");
    expect([reply.status, reply.body]).toEqual([
      401,
      {
        result: "error",
        msg: "Your username or password is incorrect",
        code: "AUTHENTICATION_FAILED",
      },
    ]);
    expect(reply.headers["www-authenticate"]).toBe('Basic realm="zulip"');
  });

  it("401 USER_DEACTIVATED for a deactivated user", async () => {
    const othello = await server.person("othello");
    await doSetUserActive(server.services, othello.id, false);
    try {
      const reply = await fetchKey(othello.email);
      expect([reply.status, reply.body]).toEqual([
        401,
        { result: "error", msg: "Account is deactivated", code: "USER_DEACTIVATED" },
      ]);
    } finally {
      await doSetUserActive(server.services, othello.id, true);
    }
  });

  it("401 REALM_DEACTIVATED in a deactivated realm", async () => {
    const realm = await server.db.prisma.realm.findFirstOrThrow();
    await doSetRealmActive(server.services, realm.id, false);
    try {
      const reply = await fetchKey("hamlet@example.com");
      expect([reply.status, reply.body.code]).toEqual([401, "REALM_DEACTIVATED"]);
    } finally {
      await doSetRealmActive(server.services, realm.id, true);
    }
  });

  it("404 NONEXISTENT_SUBDOMAIN on a host no realm has", async () => {
    const reply = await fetchKey("hamlet@example.com", "nowhere.chat.test");
    expect([reply.status, reply.body]).toEqual([
      404,
      { result: "error", msg: "Invalid subdomain", code: "NONEXISTENT_SUBDOMAIN" },
    ]);
  });

  it("wants a username", async () => {
    const reply = await server.call("POST", "/api/v1/dev_fetch_api_key");
    expect(reply.body).toEqual({
      result: "error",
      msg: "Missing 'username' argument",
      code: "REQUEST_VARIABLE_MISSING",
      var_name: "username",
    });
  });

  it("is not available in production", async () => {
    const production = await startTestServer({ env: { NODE_ENV: "production" } });
    try {
      const reply = await production.call("POST", "/api/v1/dev_fetch_api_key", {
        form: { username: "hamlet@example.com" },
      });
      expect([reply.status, reply.body]).toEqual([
        400,
        { result: "error", msg: "Endpoint not available in production.", code: "BAD_REQUEST" },
      ]);
      const settings = await production.call("GET", "/api/v1/server_settings");
      expect((settings.body.authentication_methods as Record<string, boolean>).dev).toBe(false);
    } finally {
      await production.close();
    }
  });
});

describe("GET /api/v1/users/me", () => {
  const validateMe = zulipResponseSchema("companions", "/users/me", "get");

  it("describes the caller, valid against Zulip's schema", async () => {
    const iago = await server.person("iago");
    const reply = await server.call("GET", "/api/v1/users/me", { auth: [iago.email, iago.apiKey] });
    expect(validateMe(reply.body)).toEqual([]);
    expect(reply.body).toMatchObject({
      user_id: iago.id,
      email: "iago@example.com",
      role: 200,
      is_admin: true,
      is_owner: false,
    });
  });
});
