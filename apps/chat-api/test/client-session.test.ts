import { DEMO_PASSWORD } from "../src/cli/demo-data";
import { type TestServer, channelIds, startTestServer } from "./support/server";
import { eventsSchema, registerSchema, zulipResponseSchema } from "./support/zulip-schema";

/**
 * A whole session of two people, as two real clients live it: each logs in,
 * loads its state, and keeps that state by applying the events it receives
 * while both read, send, reply, react, edit, star, type, search, list topics,
 * see presence, subscribe, unsubscribe and mute a topic (the 21 steps of a
 * session). At the end each client's state must equal what a fresh
 * `register` returns. Every answer with a schema is checked against Zulip's.
 */

/** The state this session's clients keep, and the events that keep it. */
const TYPES = [
  "message",
  "update_message_flags",
  "update_message",
  "delete_message",
  "reaction",
  "typing",
  "presence",
  "subscription",
  "user_topic",
  "recent_private_conversations",
  "starred_messages",
];

type Message = {
  id: number;
  type: "stream" | "private";
  stream_id?: number;
  subject: string;
  display_recipient: string | { id: number }[];
};
type Event = Record<string, unknown> & { id: number; type: string };
type Sub = { stream_id: number; subscribers: number[]; is_muted: boolean; color: string };
type UserTopic = { stream_id: number; topic_name: string; visibility_policy: number };

/** A client's view: the unread messages by conversation, and the rest of the state it keeps. */
class Client {
  auth!: { auth: readonly [string, string] };
  userId!: number;
  queueId!: string;
  lastEventId = -1;
  unread = new Map<number, string>();
  starred = new Set<number>();
  maxMessageId = -1;
  conversations = new Map<string, number>();
  subscriptions = new Map<number, Sub>();
  userTopics = new Map<string, UserTopic>();
  seen: Event[] = [];

  constructor(
    readonly server: TestServer,
    readonly email: string,
  ) {}

  call(method: string, path: string, form?: Record<string, unknown>) {
    const encoded =
      form === undefined
        ? undefined
        : Object.fromEntries(
            Object.entries(form).map(([k, v]) => [
              k,
              typeof v === "string" ? v : JSON.stringify(v),
            ]),
          );
    return this.server.call(method, `/api/v1${path}`, {
      ...this.auth,
      ...(encoded === undefined ? {} : method === "GET" ? { query: encoded } : { form: encoded }),
    });
  }

  async login(): Promise<void> {
    const reply = await this.server.call("POST", "/api/v1/fetch_api_key", {
      form: { username: this.email, password: DEMO_PASSWORD },
    });
    expect(reply.status).toBe(200);
    this.auth = { auth: [this.email, String(reply.body.api_key)] };
    this.userId = reply.body.user_id as number;
  }

  static stateOf(body: Record<string, unknown>, userId: number) {
    const unread = new Map<number, string>();
    const unreadMsgs = body.unread_msgs as {
      pms: { other_user_id: number; unread_message_ids: number[] }[];
      streams: { stream_id: number; topic: string; unread_message_ids: number[] }[];
      huddles: { user_ids_string: string; unread_message_ids: number[] }[];
    };
    for (const p of unreadMsgs.pms)
      for (const id of p.unread_message_ids)
        unread.set(id, `dm:${[p.other_user_id, userId].sort((a, b) => a - b).join(",")}`);
    for (const h of unreadMsgs.huddles)
      for (const id of h.unread_message_ids) unread.set(id, `dm:${h.user_ids_string}`);
    for (const s of unreadMsgs.streams)
      for (const id of s.unread_message_ids)
        unread.set(id, `stream:${s.stream_id}:${s.topic.toLowerCase()}`);
    return {
      unread,
      starred: new Set(body.starred_messages as number[]),
      maxMessageId: body.max_message_id as number,
      conversations: new Map(
        (body.recent_private_conversations as { user_ids: number[]; max_message_id: number }[]).map(
          (c) => [[...c.user_ids].sort((a, b) => a - b).join(","), c.max_message_id],
        ),
      ),
      subscriptions: new Map(
        (body.subscriptions as Sub[]).map((s) => [
          s.stream_id,
          {
            stream_id: s.stream_id,
            subscribers: [...s.subscribers].sort((a, b) => a - b),
            is_muted: s.is_muted,
            color: s.color,
          },
        ]),
      ),
      userTopics: new Map(
        (body.user_topics as UserTopic[]).map((t) => [
          `${t.stream_id}:${t.topic_name.toLowerCase()}`,
          {
            stream_id: t.stream_id,
            topic_name: t.topic_name,
            visibility_policy: t.visibility_policy,
          },
        ]),
      ),
    };
  }

  async register(): Promise<Record<string, unknown>> {
    const reply = await this.call("POST", "/register", {
      event_types: TYPES,
      fetch_event_types: [...TYPES, "realm_user"],
      include_subscribers: true,
      client_capabilities: { bulk_message_deletion: true, empty_topic_name: true },
    });
    expect(reply.status).toBe(200);
    expect(registerSchema([...TYPES, "realm_user"])(reply.body)).toEqual([]);
    return reply.body;
  }

  async start(): Promise<void> {
    const body = await this.register();
    this.queueId = body.queue_id as string;
    Object.assign(this, Client.stateOf(body, this.userId));
  }

  /** Polls the queue and applies every event to the state. */
  async poll(): Promise<Event[]> {
    const reply = await this.call("GET", "/events", {
      queue_id: this.queueId,
      last_event_id: String(this.lastEventId),
      dont_block: "true",
    });
    expect(reply.status).toBe(200);
    expect(validateEvents(reply.body)).toEqual([]);
    const events = reply.body.events as Event[];
    for (const event of events) {
      expect(event.id).toBeGreaterThan(this.lastEventId);
      this.lastEventId = event.id;
      this.apply(event);
    }
    this.seen.push(...events);
    return events;
  }

  private keyOf(message: Message): string {
    if (message.type === "stream")
      return `stream:${message.stream_id}:${message.subject.toLowerCase()}`;
    const ids = (message.display_recipient as { id: number }[]).map((r) => r.id);
    return `dm:${ids.sort((a, b) => a - b).join(",")}`;
  }

  apply(event: Event): void {
    switch (event.type) {
      case "message": {
        const message = event.message as Message;
        this.maxMessageId = Math.max(this.maxMessageId, message.id);
        if (!(event.flags as string[]).includes("read"))
          this.unread.set(message.id, this.keyOf(message));
        if (message.type === "private") {
          const others = (message.display_recipient as { id: number }[])
            .map((r) => r.id)
            .filter((id) => id !== this.userId)
            .sort((a, b) => a - b)
            .join(",");
          this.conversations.set(
            others,
            Math.max(this.conversations.get(others) ?? -1, message.id),
          );
        }
        break;
      }
      case "update_message_flags": {
        const ids = event.messages as number[];
        if (event.flag === "read" && event.op === "add")
          for (const id of ids) this.unread.delete(id);
        if (event.flag === "read" && event.op === "remove") {
          const details = event.message_details as Record<
            string,
            { type: string; stream_id?: number; topic?: string; user_ids?: number[] }
          >;
          for (const id of ids) {
            const d = details[String(id)];
            if (d === undefined) continue;
            this.unread.set(
              id,
              d.type === "stream"
                ? `stream:${d.stream_id}:${(d.topic ?? "").toLowerCase()}`
                : `dm:${[...(d.user_ids ?? []), this.userId].sort((a, b) => a - b).join(",")}`,
            );
          }
        }
        if (event.flag === "starred")
          for (const id of ids) {
            if (event.op === "add") this.starred.add(id);
            else this.starred.delete(id);
          }
        break;
      }
      case "update_message":
        if (typeof event.subject === "string")
          for (const id of event.message_ids as number[])
            if (this.unread.has(id))
              this.unread.set(
                id,
                `stream:${String(event.stream_id)}:${event.subject.toLowerCase()}`,
              );
        break;
      case "delete_message":
        for (const id of event.message_ids as number[]) {
          this.unread.delete(id);
          this.starred.delete(id);
        }
        break;
      case "subscription":
        if (event.op === "add")
          for (const s of event.subscriptions as Sub[])
            this.subscriptions.set(s.stream_id, {
              stream_id: s.stream_id,
              subscribers: [...s.subscribers].sort((a, b) => a - b),
              is_muted: s.is_muted,
              color: s.color,
            });
        if (event.op === "remove")
          for (const s of event.subscriptions as { stream_id: number }[])
            this.subscriptions.delete(s.stream_id);
        if (event.op === "peer_add" || event.op === "peer_remove")
          for (const streamId of event.stream_ids as number[]) {
            const sub = this.subscriptions.get(streamId);
            if (sub === undefined) continue;
            const users = new Set(sub.subscribers);
            for (const id of event.user_ids as number[]) {
              if (event.op === "peer_add") users.add(id);
              else users.delete(id);
            }
            sub.subscribers = [...users].sort((a, b) => a - b);
          }
        if (event.op === "update") {
          const sub = this.subscriptions.get(event.stream_id as number);
          if (sub !== undefined && event.property === "is_muted")
            sub.is_muted = event.value as boolean;
          if (sub !== undefined && event.property === "color") sub.color = event.value as string;
        }
        break;
      case "user_topic": {
        const key = `${String(event.stream_id)}:${String(event.topic_name).toLowerCase()}`;
        if (event.visibility_policy === 0) this.userTopics.delete(key);
        else
          this.userTopics.set(key, {
            stream_id: event.stream_id as number,
            topic_name: event.topic_name as string,
            visibility_policy: event.visibility_policy as number,
          });
        break;
      }
      default:
        break;
    }
  }

  /** The state kept so far, in the form {@link Client.stateOf} reads a fresh one. */
  kept() {
    return {
      unread: this.unread,
      starred: this.starred,
      maxMessageId: this.maxMessageId,
      conversations: this.conversations,
      subscriptions: this.subscriptions,
      userTopics: this.userTopics,
    };
  }
}

/** Every event checked against Zulip's descriptions (companions.json and events-extra.json). */
const validateEvents = eventsSchema();

const validate = {
  messages: zulipResponseSchema("companions", "/messages", "get"),
  topics: zulipResponseSchema("session", "/users/me/{stream_id}/topics", "get"),
  flags: zulipResponseSchema("session", "/messages/flags", "post"),
};

let server: TestServer;
let channels: Record<string, number>;

beforeAll(async () => {
  server = await startTestServer();
  channels = await channelIds(server);
});

afterAll(() => server.close());

it("checks events against Zulip's descriptions, refusing an undescribed or widened one", () => {
  const event = { id: 1, type: "message", message: { id: 5 }, flags: ["read"] };
  expect(validateEvents({ result: "success", msg: "", events: [event] })).toEqual([]);
  expect(
    validateEvents({
      result: "success",
      msg: "",
      events: [{ ...event, source: { content: "x" } }],
    }),
  ).toEqual(["/events/0 (message) matches no described event"]);
  expect(
    validateEvents({ result: "success", msg: "", events: [{ id: 2, type: "invented" }] }),
  ).toEqual(["/events/0 (invented) matches no described event"]);
});

it("two clients live a whole session and end with the state a fresh register gives", async () => {
  const a = new Client(server, "hamlet@example.com");
  const b = new Client(server, "othello@example.com");
  const denmark = channels.Denmark ?? 0;

  // 1-3: log in, connect, load the state.
  await a.login();
  await b.login();
  expect((await a.call("GET", "/server_settings")).status).toBe(200);
  await a.start();
  await b.start();

  // 4-6: the home view, a channel, a direct conversation.
  const view = async (client: Client, narrow: unknown[]) => {
    const reply = await client.call("GET", "/messages", {
      anchor: "newest",
      num_before: "20",
      num_after: "0",
      narrow,
    });
    expect(validate.messages(reply.body)).toEqual([]);
    return reply.body.messages as Message[];
  };
  expect((await view(b, [])).length).toBeGreaterThan(0);
  expect(
    (await view(b, [{ operator: "channel", operand: denmark }])).every(
      (m) => m.stream_id === denmark,
    ),
  ).toBe(true);
  expect(await view(b, [{ operator: "dm", operand: "hamlet@example.com" }])).toEqual([]);

  // 7-9: send to a channel and to a person; the other receives both live.
  const toChannel = (
    await a.call("POST", "/messages", {
      type: "stream",
      to: String(denmark),
      topic: "session",
      content: "The play's the thing",
    })
  ).body.id as number;
  const toPerson = (
    await a.call("POST", "/messages", {
      type: "direct",
      to: [b.userId],
      content: "A word, Othello",
    })
  ).body.id as number;
  const live = await b.poll();
  expect(live.filter((e) => e.type === "message").map((e) => (e.message as Message).id)).toEqual([
    toChannel,
    toPerson,
  ]);
  await a.poll();

  // 10: mark read.
  const read = await b.call("POST", "/messages/flags", {
    messages: [toChannel, toPerson],
    op: "add",
    flag: "read",
  });
  expect(validate.flags(read.body)).toEqual([]);

  // 11-13: reply, react, edit.
  const reply = (
    await b.call("POST", "/messages", {
      type: "stream",
      to: String(denmark),
      topic: "session",
      content: "Wherein I'll catch the consience",
    })
  ).body.id as number;
  expect(
    (await a.call("POST", `/messages/${reply}/reactions`, { emoji_name: "octopus" })).status,
  ).toBe(200);
  expect(
    (await b.call("PATCH", `/messages/${reply}`, { content: "Wherein I'll catch the conscience" }))
      .status,
  ).toBe(200);

  // 14-15: star, type.
  expect(
    (await a.call("POST", "/messages/flags", { messages: [toPerson], op: "add", flag: "starred" }))
      .status,
  ).toBe(200);
  expect((await a.call("POST", "/typing", { op: "start", to: [b.userId] })).status).toBe(200);

  // 16-18: search, list topics, see presence.
  const found = await view(a, [{ operator: "search", operand: "conscience" }]);
  expect(found.map((m) => m.id)).toEqual([reply]);
  const topics = await a.call("GET", `/users/me/${denmark}/topics`);
  expect(validate.topics(topics.body)).toEqual([]);
  expect((topics.body.topics as { name: string }[])[0]?.name).toBe("session");
  expect((await a.call("POST", "/users/me/presence", { status: "active" })).status).toBe(200);

  // 19-21: subscribe, unsubscribe, mute a topic.
  expect(
    (await b.call("POST", "/users/me/subscriptions", { subscriptions: [{ name: "session room" }] }))
      .status,
  ).toBe(200);
  expect(
    (await a.call("POST", "/users/me/subscriptions", { subscriptions: [{ name: "session room" }] }))
      .status,
  ).toBe(200);
  expect(
    (await b.call("DELETE", "/users/me/subscriptions", { subscriptions: ["session room"] })).status,
  ).toBe(200);
  expect(
    (
      await b.call("POST", "/user_topics", {
        stream_id: String(denmark),
        topic: "session",
        visibility_policy: "1",
      })
    ).status,
  ).toBe(200);

  await a.poll();
  await b.poll();
  const types = (client: Client) => new Set(client.seen.map((e) => e.type));
  expect(types(a)).toEqual(
    new Set([
      "message",
      "update_message_flags",
      "typing",
      "reaction",
      "update_message",
      "subscription",
      "presence",
    ]),
  );
  expect(types(b)).toEqual(
    new Set([
      "message",
      "update_message_flags",
      "reaction",
      "update_message",
      "typing",
      "presence",
      "subscription",
      "user_topic",
    ]),
  );
  expect(b.seen.find((e) => e.type === "typing")).toMatchObject({
    op: "start",
    sender: { user_id: a.userId },
  });

  // Each client's state equals a fresh register's.
  for (const client of [a, b]) {
    const fresh = Client.stateOf(await client.register(), client.userId);
    expect(client.kept()).toEqual(fresh);
  }
  expect(a.starred).toEqual(new Set([toPerson]));
  expect(b.unread.has(toChannel)).toBe(false);
  expect(b.userTopics.get(`${denmark}:session`)?.visibility_policy).toBe(1);
});
