import { DEMO_PASSWORD } from "../src/cli/demo-data";
import { doSetPassword } from "../src/actions/accounts";
import {
  type Cast,
  type TestServer,
  apiError,
  channelIds,
  createOtherRealm,
  loadCast,
  startTestServer,
} from "./support/server";
import { MOBILE_CAPABILITIES, MOBILE_FETCH_TYPES } from "./support/clients";
import { registerSchema, zulipResponseSchema } from "./support/zulip-schema";

/**
 * What a Zulip client calls as it starts, before and after it has a key:
 * password login (POST /fetch_api_key) and the lookups of its first screens,
 * each answer checked against Zulip's schema.
 */
const validate = {
  fetchApiKey: zulipResponseSchema("session", "/fetch_api_key", "post"),
  user: zulipResponseSchema("session", "/users/{user_id}", "get"),
  userByEmail: zulipResponseSchema("session", "/users/{email}", "get"),
  streamId: zulipResponseSchema("session", "/get_stream_id", "get"),
  members: zulipResponseSchema("session", "/streams/{stream_id}/members", "get"),
  topics: zulipResponseSchema("session", "/users/me/{stream_id}/topics", "get"),
  subscribed: zulipResponseSchema("session", "/users/{user_id}/subscriptions/{stream_id}", "get"),
  emoji: zulipResponseSchema("session", "/realm/emoji", "get"),
  serverSettings: zulipResponseSchema("subset", "/server_settings", "get"),
  register: registerSchema(MOBILE_FETCH_TYPES),
  messages: zulipResponseSchema("companions", "/messages", "get"),
};

let server: TestServer;
let cast: Cast;
let denmark: number;
let other: Awaited<ReturnType<typeof createOtherRealm>>;
const otherHost = { host: "lear.chat.test" };

beforeAll(async () => {
  server = await startTestServer();
  cast = await loadCast(server, ["iago", "hamlet", "cordelia", "othello", "polonius"]);
  const channels = await channelIds(server);
  denmark = channels.Denmark ?? 0;
  other = await createOtherRealm(server);
});

afterAll(() => server.close());

const as = (who: string) => cast.as(who);
const id = (who: string) => cast.id(who);

const login = (username: string, password: string) =>
  server.call("POST", "/api/v1/fetch_api_key", { form: { username, password } });

describe("POST /api/v1/fetch_api_key", () => {
  it("answers the key of a demo person who gives the demo password, any case of the address", async () => {
    const reply = await login("Hamlet@Example.com", DEMO_PASSWORD);
    expect(reply.status).toBe(200);
    expect(validate.fetchApiKey(reply.body)).toEqual([]);
    expect(reply.body).toMatchObject({
      api_key: cast.person("hamlet").apiKey,
      email: "hamlet@example.com",
      user_id: id("hamlet"),
    });
    // The key works.
    const me = await server.call("GET", "/api/v1/users/me", {
      auth: ["hamlet@example.com", String(reply.body.api_key)],
    });
    expect(me.status).toBe(200);
  });

  it("answers a wrong password and an unknown address alike, 401 AUTHENTICATION_FAILED", async () => {
    const failed = {
      result: "error",
      msg: "Your username or password is incorrect",
      code: "AUTHENTICATION_FAILED",
    };
    for (const [username, password] of [
      ["hamlet@example.com", "not-the-password"],
      ["hamlet@example.com", ""],
      ["nobody@example.com", DEMO_PASSWORD],
      ["hamlet@example.com", "x".repeat(5000)],
    ] as const) {
      const reply = await login(username, password);
      expect(reply.status).toBe(401);
      expect(reply.body).toEqual(failed);
    }
  });

  it("logs in with a password set later, and not with the old one", async () => {
    await server.db.transaction((tx) =>
      doSetPassword(tx, id("cordelia"), "A new one, with ünïcode"),
    );
    expect((await login("cordelia@example.com", DEMO_PASSWORD)).status).toBe(401);
    const reply = await login("cordelia@example.com", "A new one, with ünïcode");
    expect(reply.status).toBe(200);
    expect(reply.body.user_id).toBe(id("cordelia"));
  });

  it("refuses a deactivated account once its password is right, and a realm without password login", async () => {
    await server.db.transaction((tx) => doSetPassword(tx, other.outsider.id, "outsider-pass"));
    const host = otherHost;
    const ok = await server.call("POST", "/api/v1/fetch_api_key", {
      ...host,
      form: { username: other.outsider.email, password: "outsider-pass" },
    });
    expect(ok.status).toBe(200);
    // The demo realm's people are not the other realm's.
    const cross = await server.call("POST", "/api/v1/fetch_api_key", {
      ...host,
      form: { username: "hamlet@example.com", password: DEMO_PASSWORD },
    });
    expect(cross.status).toBe(401);

    await server.db.prisma.user.update({
      where: { id: other.outsider.id },
      data: { is_active: false },
    });
    const deactivated = await server.call("POST", "/api/v1/fetch_api_key", {
      ...host,
      form: { username: other.outsider.email, password: "outsider-pass" },
    });
    expect(deactivated.status).toBe(401);
    expect(deactivated.body).toEqual(apiError("Account is deactivated", "USER_DEACTIVATED"));

    await server.db.prisma.realm.update({
      where: { id: other.realmId },
      data: { password_auth_enabled: false },
    });
    server.services.bus.apply({ realm: other.realmId });
    const disabled = await server.call("POST", "/api/v1/fetch_api_key", {
      ...host,
      form: { username: other.outsider.email, password: "outsider-pass" },
    });
    expect(disabled.status).toBe(401);
    expect(disabled.body).toEqual(
      apiError(
        "Password authentication is disabled in this organization",
        "PASSWORD_AUTH_DISABLED",
      ),
    );
    const settings = await server.call("GET", "/api/v1/server_settings", host);
    expect((settings.body.authentication_methods as Record<string, boolean>).password).toBe(false);
  });

  it("stores a hash, never the password", async () => {
    const row = await server.db.prisma.user.findUniqueOrThrow({ where: { id: id("hamlet") } });
    expect(row.password).toMatch(/^scrypt\$32768\$8\$1\$[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]{44}$/);
    expect(row.password).not.toContain(DEMO_PASSWORD);
  });
});

describe("GET /api/v1/users/{user_id} and /users/{email}", () => {
  it("describes one user of the realm by id or by address, as GET /users does", async () => {
    const byId = await server.call("GET", `/api/v1/users/${id("cordelia")}`, as("hamlet"));
    expect(byId.status).toBe(200);
    expect(validate.user(byId.body)).toEqual([]);
    expect(byId.body.user).toMatchObject({
      user_id: id("cordelia"),
      email: "cordelia@example.com",
      delivery_email: null,
      is_admin: false,
    });
    const byEmail = await server.call(
      "GET",
      `/api/v1/users/${encodeURIComponent("CORDELIA@example.com")}`,
      { ...as("hamlet"), query: { include_custom_profile_fields: true, client_gravatar: false } },
    );
    expect(byEmail.status).toBe(200);
    expect(validate.userByEmail(byEmail.body)).toEqual([]);
    const user = byEmail.body.user as Record<string, unknown>;
    expect(user.user_id).toBe(id("cordelia"));
    expect(user.avatar_url).toEqual(expect.stringContaining("gravatar"));
    expect(user.profile_data).toEqual(expect.any(Object));
  });

  it("answers `No such user` for another realm's user, an unknown id or address", async () => {
    for (const ref of [
      String(other.outsider.id),
      encodeURIComponent(other.outsider.email),
      "999999",
      "x%40y.z",
      // Pattern characters are compared as written: `%` is no address at all.
      "%25",
      encodeURIComponent("_ordelia@example.com"),
    ]) {
      const reply = await server.call("GET", `/api/v1/users/${ref}`, as("hamlet"));
      expect(reply.status).toBe(400);
      expect(reply.body).toEqual(apiError("No such user"));
    }
    // Digits past int32 are no id, so an address no one has.
    const huge = await server.call("GET", "/api/v1/users/99999999999", as("hamlet"));
    expect(huge.body).toEqual(apiError("No such user"));
    // A segment that does not decode is no path at all.
    const garbled = await server.call("GET", "/api/v1/users/%E0%A4%A", as("hamlet"));
    expect(garbled.status).toBe(404);
    expect(garbled.body).toEqual(apiError("Not found", "NOT_FOUND"));
  });

  it("still answers GET /users/me as the caller's own user", async () => {
    const me = await server.call("GET", "/api/v1/users/me", as("hamlet"));
    expect(me.status).toBe(200);
    expect(me.body.user_id).toBe(id("hamlet"));
  });
});

describe("channel lookups", () => {
  it("GET /get_stream_id finds a visible channel by name, in any case", async () => {
    const reply = await server.call("GET", "/api/v1/get_stream_id", {
      ...as("hamlet"),
      query: { stream: "DENMARK" },
    });
    expect(reply.status).toBe(200);
    expect(validate.streamId(reply.body)).toEqual([]);
    expect(reply.body.stream_id).toBe(denmark);
    const missing = await server.call("GET", "/api/v1/get_stream_id", {
      ...as("hamlet"),
      query: { stream: "Elsinore" },
    });
    expect(missing.body).toEqual(apiError("Invalid channel name 'Elsinore'"));
  });

  it("GET /streams/{stream_id}/members lists the channel's active subscribers", async () => {
    const reply = await server.call("GET", `/api/v1/streams/${denmark}/members`, as("hamlet"));
    expect(reply.status).toBe(200);
    expect(validate.members(reply.body)).toEqual([]);
    const subscribers = reply.body.subscribers as number[];
    const rows = await server.db.prisma.subscription.findMany({
      where: { channel_id: denmark, active: true, user: { is_active: true } },
    });
    expect(subscribers).toEqual(rows.map((r) => r.user_id).sort((a, b) => a - b));
    expect(subscribers).toContain(id("hamlet"));
  });

  it("GET /users/{user_id}/subscriptions/{stream_id} tells whether a user is subscribed", async () => {
    const subscribed = await server.call(
      "GET",
      `/api/v1/users/${id("hamlet")}/subscriptions/${denmark}`,
      as("cordelia"),
    );
    expect(subscribed.status).toBe(200);
    expect(validate.subscribed(subscribed.body)).toEqual([]);
    const expected = await server.db.prisma.subscription.findUnique({
      where: { user_id_channel_id: { user_id: id("hamlet"), channel_id: denmark } },
    });
    expect(subscribed.body.is_subscribed).toBe(expected?.active === true);
    const noone = await server.call(
      "GET",
      `/api/v1/users/999999/subscriptions/${denmark}`,
      as("cordelia"),
    );
    expect(noone.body).toEqual(apiError("No such user"));
    const nochannel = await server.call(
      "GET",
      `/api/v1/users/${id("hamlet")}/subscriptions/999999`,
      as("cordelia"),
    );
    expect(nochannel.body).toEqual(apiError("Invalid channel ID"));
  });

  it("GET /users/me/{stream_id}/topics lists each topic once, newest first, with its newest message", async () => {
    const send = (topic: string) =>
      server.call("POST", "/api/v1/messages", {
        ...as("hamlet"),
        form: { type: "stream", to: denmark, topic, content: `about ${topic}` },
      });
    const first = await send("Ghosts");
    const second = await send("ramparts");
    const third = await send("ghosts");
    expect([first.status, second.status, third.status]).toEqual([200, 200, 200]);
    const reply = await server.call("GET", `/api/v1/users/me/${denmark}/topics`, as("cordelia"));
    expect(reply.status).toBe(200);
    expect(validate.topics(reply.body)).toEqual([]);
    const topics = reply.body.topics as { name: string; max_id: number }[];
    expect(topics.slice(0, 2)).toEqual([
      { name: "ghosts", max_id: third.body.id },
      { name: "ramparts", max_id: second.body.id },
    ]);
    expect(topics.filter((t) => t.name.toLowerCase() === "ghosts")).toHaveLength(1);
    const ids = topics.map((t) => t.max_id);
    expect(ids).toEqual([...ids].sort((a, b) => b - a));
  });

  it("shows the empty topic as `general chat` unless the client allows empty names", async () => {
    const sent = await server.call("POST", "/api/v1/messages", {
      ...as("hamlet"),
      form: { type: "stream", to: denmark, topic: "", content: "no topic" },
    });
    expect(sent.status).toBe(200);
    const names = async (allow: boolean) => {
      const reply = await server.call("GET", `/api/v1/users/me/${denmark}/topics`, {
        ...as("hamlet"),
        query: { allow_empty_topic_name: allow },
      });
      return (reply.body.topics as { name: string }[])[0]?.name;
    };
    expect(await names(false)).toBe("general chat");
    expect(await names(true)).toBe("");
  });

  it("refuses every channel lookup on a channel the caller cannot see, as missing", async () => {
    const secret = await server.db.prisma.channel.findFirstOrThrow({
      where: { invite_only: true, subscriptions: { none: { user_id: id("polonius") } } },
    });
    for (const path of [
      `/api/v1/streams/${secret.id}/members`,
      `/api/v1/users/me/${secret.id}/topics`,
      `/api/v1/users/${id("iago")}/subscriptions/${secret.id}`,
    ]) {
      const reply = await server.call("GET", path, as("polonius"));
      expect(reply.status).toBe(400);
      expect(reply.body).toEqual(apiError("Invalid channel ID"));
    }
  });

  it("GET /realm/emoji answers the realm's custom emoji: none can be uploaded here", async () => {
    const reply = await server.call("GET", "/api/v1/realm/emoji", as("hamlet"));
    expect(reply.status).toBe(200);
    expect(validate.emoji(reply.body)).toEqual([]);
    expect(reply.body.emoji).toEqual({});
  });
});

describe("a mobile client's start-up, step by step", () => {
  it("connects, logs in, loads its state and the newest messages of each view", async () => {
    const settings = await server.call("GET", "/api/v1/server_settings");
    expect(validate.serverSettings(settings.body)).toEqual([]);
    expect(settings.body.authentication_methods).toMatchObject({ password: true });

    const login = await server.call("POST", "/api/v1/fetch_api_key", {
      form: { username: "othello@example.com", password: DEMO_PASSWORD },
    });
    expect(validate.fetchApiKey(login.body)).toEqual([]);
    const auth = { auth: ["othello@example.com", String(login.body.api_key)] as const };

    const state = await server.call("POST", "/api/v1/register", {
      ...auth,
      form: {
        fetch_event_types: JSON.stringify(MOBILE_FETCH_TYPES),
        event_types: JSON.stringify(MOBILE_FETCH_TYPES),
        client_capabilities: JSON.stringify(MOBILE_CAPABILITIES),
        apply_markdown: "true",
        client_gravatar: "true",
      },
    });
    expect(state.status).toBe(200);
    expect(validate.register(state.body)).toEqual([]);

    const sentByEmail = await server.call("POST", "/api/v1/messages", {
      ...as("hamlet"),
      form: { type: "private", to: "othello@example.com", content: "the handkerchief" },
    });
    const view = async (narrow: unknown[]) => {
      const reply = await server.call("GET", "/api/v1/messages", {
        ...auth,
        query: {
          anchor: "newest",
          num_before: 20,
          num_after: 0,
          narrow: JSON.stringify(narrow),
          client_gravatar: "true",
          apply_markdown: "true",
        },
      });
      expect(reply.status).toBe(200);
      expect(validate.messages(reply.body)).toEqual([]);
      expect(reply.body.anchor).toBe(10_000_000_000_000_000);
      return reply.body.messages as { id: number; stream_id?: number; subject: string }[];
    };
    const home = await view([]);
    expect(home.at(-1)?.id).toBe(sentByEmail.body.id);
    // register's max_message_id was the newest message before this one.
    expect(home.at(-2)?.id).toBe(state.body.max_message_id);
    const channel = await view([{ operator: "stream", operand: denmark }]);
    expect(channel.length).toBeGreaterThan(0);
    expect(channel.every((m) => m.stream_id === denmark)).toBe(true);
    const topic = channel.at(-1)?.subject ?? "";
    const inTopic = await view([
      { operator: "stream", operand: "Denmark" },
      { operator: "topic", operand: topic },
    ]);
    expect(inTopic.every((m) => m.subject === topic)).toBe(true);
    const byEmail = await view([{ operator: "dm", operand: "hamlet@example.com" }]);
    const byId = await view([{ operator: "dm", operand: [id("hamlet")] }]);
    expect(byEmail.map((m) => m.id)).toEqual([sentByEmail.body.id]);
    expect(byId).toEqual(byEmail);
    const search = await view([{ operator: "search", operand: "handkerchief" }]);
    expect(search.map((m) => m.id)).toEqual([sentByEmail.body.id]);
  });
});
