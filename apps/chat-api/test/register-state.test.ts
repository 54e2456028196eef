import { doSetUserActive } from "../src/actions/accounts";
import {
  type Cast,
  type TestServer,
  channelIds,
  loadCast,
  startTestServer,
} from "./support/server";
import { MOBILE_CAPABILITIES, MOBILE_FETCH_TYPES } from "./support/clients";
import { REGISTER_STATE_TYPES, registerSchema } from "./support/zulip-schema";

/**
 * POST /register's initial state: every state type a real client asks for,
 * each answer checked against Zulip's schema of /register (with the state
 * keys of register-state.json), and the state kept current by the events
 * that follow it.
 */

let server: TestServer;
let cast: Cast;
let channels: Record<string, number>;

beforeAll(async () => {
  server = await startTestServer();
  cast = await loadCast(server, ["iago", "hamlet", "othello", "cordelia", "polonius", "prospero"]);
  channels = await channelIds(server);
});

afterAll(() => server.close());

const as = (who: string) => cast.as(who);
const id = (who: string) => cast.id(who);

async function register(who: string, form: Record<string, unknown>) {
  const encoded = Object.fromEntries(
    Object.entries(form).map(([k, v]) => [k, typeof v === "string" ? v : JSON.stringify(v)]),
  );
  const reply = await server.call("POST", "/api/v1/register", { ...as(who), form: encoded });
  expect(reply.status).toBe(200);
  return reply.body as Record<string, unknown> & { queue_id: string };
}

async function send(who: string, form: Record<string, string>): Promise<number> {
  const reply = await server.call("POST", "/api/v1/messages", { ...as(who), form });
  expect(reply.status).toBe(200);
  return reply.body.id as number;
}

describe("POST /api/v1/register: the initial state", () => {
  it("answers every state type of the mobile app's start as Zulip's schema describes it", async () => {
    const state = await register("othello", {
      fetch_event_types: MOBILE_FETCH_TYPES,
      event_types: MOBILE_FETCH_TYPES,
      client_capabilities: MOBILE_CAPABILITIES,
    });
    expect(registerSchema(MOBILE_FETCH_TYPES)(state)).toEqual([]);
    expect(state).toMatchObject({
      user_id: id("othello"),
      email: "othello@example.com",
      full_name: "Othello, the Moor of Venice",
      is_admin: false,
      realm_name: expect.any(String) as string,
      zulip_version: expect.any(String) as string,
      event_queue_longpoll_timeout_seconds: expect.any(Number) as number,
    });
    // Othello has not read the demo's channel messages.
    const unread = state.unread_msgs as { count: number; streams: { stream_id: number }[] };
    expect(unread.count).toBeGreaterThan(0);
    expect(unread.streams.map((s) => s.stream_id)).toContain(channels.Denmark);
    expect(state.max_message_id).toBeGreaterThan(0);
    const people = state.realm_users as { user_id: number }[];
    expect(people.map((p) => p.user_id)).toEqual(
      expect.arrayContaining([id("hamlet"), id("iago"), id("othello")]),
    );
    const subscribed = state.subscriptions as { stream_id: number; desktop_notifications: null }[];
    expect(subscribed.length).toBeGreaterThan(0);
    // notification_settings_null: the channel's settings follow the user's defaults.
    expect(subscribed[0]?.desktop_notifications).toBeNull();
  });

  it("answers all it knows, schema-valid, when no type is named", async () => {
    const state = await register("iago", {});
    expect(registerSchema(REGISTER_STATE_TYPES)(state)).toEqual([]);
    // Without notification_settings_null, the defaults are spelled out.
    const subscribed = state.subscriptions as { desktop_notifications: unknown }[];
    expect(typeof subscribed[0]?.desktop_notifications).toBe("boolean");
    // An administrator sees every bot.
    expect((state.realm_bots as unknown[]).length).toBeGreaterThan(0);
  });

  it("answers only the types asked for", async () => {
    const state = await register("hamlet", { fetch_event_types: ["message"] });
    expect(registerSchema(["message"])(state)).toEqual([]);
    expect(state).toHaveProperty("max_message_id");
    expect(state).not.toHaveProperty("unread_msgs");
    expect(state).not.toHaveProperty("realm_users");
    expect(state).not.toHaveProperty("realm_name");
  });

  it("keeps unread_msgs, max_message_id and recent_private_conversations right after sends and reads", async () => {
    const types = ["message", "update_message_flags", "recent_private_conversations"];
    const before = await register("cordelia", { fetch_event_types: types });
    const dm = await send("hamlet", { type: "direct", to: `[${id("cordelia")}]`, content: "hi" });
    const group = await send("hamlet", {
      type: "direct",
      to: `[${id("cordelia")},${id("othello")}]`,
      content: "all of us",
    });
    const after = await register("cordelia", { fetch_event_types: types });
    expect(registerSchema(types)(after)).toEqual([]);
    expect(after.max_message_id).toBe(group);
    const unread = after.unread_msgs as {
      count: number;
      pms: { other_user_id: number; unread_message_ids: number[] }[];
      huddles: { user_ids_string: string; unread_message_ids: number[] }[];
    };
    const beforeCount = (before.unread_msgs as { count: number }).count;
    expect(unread.count).toBe(beforeCount + 2);
    expect(unread.pms).toContainEqual(
      expect.objectContaining({ other_user_id: id("hamlet"), unread_message_ids: [dm] }),
    );
    const members = [id("hamlet"), id("cordelia"), id("othello")].sort((a, b) => a - b).join(",");
    expect(unread.huddles).toContainEqual({
      user_ids_string: members,
      unread_message_ids: [group],
    });
    const recent = after.recent_private_conversations as {
      max_message_id: number;
      user_ids: number[];
    }[];
    expect(recent[0]).toEqual({
      max_message_id: group,
      user_ids: [id("hamlet"), id("othello")].sort((a, b) => a - b),
    });
    expect(recent[1]).toEqual({ max_message_id: dm, user_ids: [id("hamlet")] });

    const read = await server.call("POST", "/api/v1/mark_all_as_read", as("cordelia"));
    expect(read.status).toBe(200);
    const cleared = await register("cordelia", { fetch_event_types: types });
    expect(cleared.unread_msgs).toEqual({
      pms: [],
      streams: [],
      huddles: [],
      mentions: [],
      count: 0,
      old_unreads_missing: false,
    });
  });

  it("names the empty topic `general chat` unless the client takes empty names", async () => {
    const topic = "";
    await send("hamlet", {
      type: "stream",
      to: String(channels.Denmark),
      topic,
      content: "in the empty topic",
    });
    const types = ["message", "update_message_flags"];
    const named = await register("othello", { fetch_event_types: types });
    const raw = await register("othello", {
      fetch_event_types: types,
      client_capabilities: { empty_topic_name: true },
    });
    const topics = (state: Record<string, unknown>) =>
      (state.unread_msgs as { streams: { topic: string }[] }).streams.map((s) => s.topic);
    expect(topics(named)).toContain("general chat");
    expect(topics(named)).not.toContain("");
    expect(topics(raw)).toContain("");
  });

  it("lists a guest's subscriptions, and no public channel the guest cannot see", async () => {
    const state = await register("polonius", {
      fetch_event_types: ["subscription", "stream", "realm_user"],
    });
    expect(registerSchema(["subscription", "stream", "realm_user"])(state)).toEqual([]);
    expect(state.is_guest).toBe(true);
    expect(state.can_create_streams).toBe(false);
    const subscribed = (state.subscriptions as { stream_id: number }[]).map((s) => s.stream_id);
    const never = (state.never_subscribed as { stream_id: number }[]).map((s) => s.stream_id);
    const streams = (state.streams as { stream_id: number }[]).map((s) => s.stream_id);
    expect(never).toEqual([]);
    expect([...streams].sort()).toEqual([...subscribed].sort());
  });

  it("gives subscribers with include_subscribers, and a member the channels never joined", async () => {
    const created = await server.call("POST", "/api/v1/users/me/subscriptions", {
      ...as("iago"),
      form: { subscriptions: JSON.stringify([{ name: "register-state-new" }]) },
    });
    expect(created.status).toBe(200);
    const state = await register("hamlet", {
      fetch_event_types: ["subscription"],
      include_subscribers: "true",
    });
    expect(registerSchema(["subscription"])(state)).toEqual([]);
    const never = state.never_subscribed as { name: string; subscribers: number[] }[];
    const fresh = never.find((c) => c.name === "register-state-new");
    expect(fresh?.subscribers).toEqual([id("iago")]);
    const subscribed = state.subscriptions as { subscribers: number[] }[];
    expect(subscribed.every((s) => Array.isArray(s.subscribers))).toBe(true);
  });

  it("keeps realm_users and subscriptions current through realm_user and subscription events", async () => {
    const types = ["realm_user", "subscription"];
    const state = await register("othello", { event_types: types, fetch_event_types: types });
    const poll = async () => {
      const reply = await server.call("GET", "/api/v1/events", {
        ...as("othello"),
        query: { queue_id: state.queue_id, dont_block: "true" },
      });
      expect(reply.status).toBe(200);
      return reply.body.events as Record<string, unknown>[];
    };
    type Person = { user_id: number; is_active: boolean };
    type Sub = { stream_id: number; subscribers?: number[] };
    const people = new Map(
      (state.realm_users as Person[]).map((p) => [p.user_id, p] as [number, Person]),
    );
    const inactive = new Map<number, Person>();
    const subscriptions = new Map(
      (state.subscriptions as Sub[]).map((s) => [s.stream_id, s] as [number, Sub]),
    );
    const apply = (events: Record<string, unknown>[]) => {
      for (const event of events) {
        if (event.type === "realm_user" && event.op === "add") {
          const person = event.person as Person;
          people.set(person.user_id, person);
        } else if (event.type === "realm_user" && event.op === "update") {
          const change = event.person as Person;
          const known = people.get(change.user_id) ?? inactive.get(change.user_id);
          if (known === undefined) throw new Error("update of an unknown person");
          known.is_active = change.is_active;
          people.delete(known.user_id);
          inactive.delete(known.user_id);
          (known.is_active ? people : inactive).set(known.user_id, known);
        } else if (event.type === "subscription" && event.op === "add") {
          for (const sub of event.subscriptions as Sub[]) subscriptions.set(sub.stream_id, sub);
        } else if (event.type === "subscription" && event.op === "peer_add") {
          for (const streamId of event.stream_ids as number[])
            subscriptions.get(streamId)?.subscribers?.push(...(event.user_ids as number[]));
        }
      }
    };

    const bot = await server.call("POST", "/api/v1/bots", {
      ...as("hamlet"),
      form: { full_name: "Register state bot", short_name: "register-state" },
    });
    expect(bot.status).toBe(200);
    const joined = await server.call("POST", "/api/v1/users/me/subscriptions", {
      ...as("othello"),
      form: { subscriptions: JSON.stringify([{ name: "register-events" }]) },
    });
    expect(joined.status).toBe(200);
    const peer = await server.call("POST", "/api/v1/users/me/subscriptions", {
      ...as("hamlet"),
      form: { subscriptions: JSON.stringify([{ name: "register-events" }]) },
    });
    expect(peer.status).toBe(200);
    // Called outside a request: its transaction returns once this replica holds its events.
    await doSetUserActive(server.services, bot.body.user_id as number, false);
    const events = await poll();
    expect(events.map((e) => `${String(e.type)}/${String(e.op)}`)).toEqual([
      "realm_user/add",
      "subscription/add",
      "subscription/peer_add",
      "realm_user/update",
    ]);
    apply(events);

    const fresh = await register("othello", {
      fetch_event_types: types,
      include_subscribers: "true",
    });
    const byId = (list: Person[]) => [...list].sort((a, b) => a.user_id - b.user_id);
    expect(byId([...people.values()])).toEqual(byId(fresh.realm_users as Person[]));
    expect(byId([...inactive.values()])).toEqual(byId(fresh.realm_non_active_users as Person[]));
    const channel = (fresh.subscriptions as (Sub & { name: string })[]).find(
      (s) => s.name === "register-events",
    );
    expect(channel?.subscribers).toEqual([id("othello"), id("hamlet")].sort((a, b) => a - b));
    expect(subscriptions.get(channel?.stream_id ?? -1)?.subscribers?.sort((a, b) => a - b)).toEqual(
      channel?.subscribers,
    );
  });

  it("shapes each queue's message events as it registered: Markdown or HTML, avatars or not", async () => {
    const queue = async (form: Record<string, string>) => {
      const state = await register("othello", { event_types: ["message"], ...form });
      return async () => {
        const reply = await server.call("GET", "/api/v1/events", {
          ...as("othello"),
          query: { queue_id: state.queue_id, dont_block: "true" },
        });
        return (reply.body.events as { message: Record<string, unknown> }[]).map((e) => e.message);
      };
    };
    const bot = await queue({});
    const web = await queue({ apply_markdown: "true", client_gravatar: "false" });
    await send("hamlet", {
      type: "direct",
      to: `[${id("othello")}]`,
      content: "a <tag> & **stars**",
    });
    const [plain] = await bot();
    const [html] = await web();
    expect(plain).toMatchObject({
      content: "a <tag> & **stars**",
      content_type: "text/x-markdown",
      avatar_url: null,
    });
    expect(html).toMatchObject({
      content: "<p>a &lt;tag&gt; &amp; <strong>stars</strong></p>",
      content_type: "text/html",
      avatar_url: expect.stringMatching(/^https:\/\/secure\.gravatar\.com\/avatar\//) as string,
    });
    expect(plain).not.toHaveProperty("source");
    expect(Object.keys(plain ?? {}).sort()).toEqual(Object.keys(html ?? {}).sort());
  });
});
