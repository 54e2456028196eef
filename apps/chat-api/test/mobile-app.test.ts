import { createHash } from "node:crypto";
import { DEMO_PASSWORD } from "../src/cli/demo-data";
import { collectIdleQueues } from "../src/realtime/queue";
import {
  APP_REGISTER,
  eventProblems,
  flutterProblems,
  snapshotProblems,
} from "./support/flutter-models";
import {
  type Cast,
  type TestServer,
  apiError,
  channelIds,
  listenAs,
  loadCast,
  startTestServer,
} from "./support/server";
import { eventsSchema } from "./support/zulip-schema";

/**
 * A session of Zulip's mobile app (zulip-flutter at e989e4f6), as the app
 * makes its requests (lib/api/route/*.dart), with every answer and event
 * parsed as the app's models parse them (test/fixtures/zulip-flutter) as
 * well as checked against Zulip's schemas (issue 47).
 */
let server: TestServer;
let cast: Cast;
let channels: Record<string, number>;

beforeAll(async () => {
  server = await startTestServer();
  cast = await loadCast(server, ["hamlet", "othello", "iago", "cordelia"]);
  channels = await channelIds(server);
});

afterAll(() => server.close());

const call = (who: string, method: string, path: string, form: Record<string, string> = {}) =>
  server.call(method, `/api/v1${path}`, { ...cast.as(who), form });

const validateEvents = eventsSchema();

/** A queue as the app keeps one: registered as it does, polled without blocking. */
async function appQueue(who: string) {
  const reply = await call(who, "POST", "/register", APP_REGISTER);
  expect(reply.status).toBe(200);
  expect(snapshotProblems(reply.body)).toEqual([]);
  const queueId = reply.body.queue_id as string;
  let last = reply.body.last_event_id as number;
  return {
    snapshot: reply.body,
    queueId,
    /** The events since the last poll, each parsed as the app parses it. */
    async poll(): Promise<Record<string, unknown>[]> {
      const polled = await server.call("GET", "/api/v1/events", {
        ...cast.as(who),
        query: { queue_id: queueId, last_event_id: String(last), dont_block: "true" },
      });
      expect(polled.status).toBe(200);
      expect(eventProblems(polled.body)).toEqual([]);
      expect(validateEvents(polled.body)).toEqual([]);
      const events = polled.body.events as (Record<string, unknown> & { id: number })[];
      last = events.at(-1)?.id ?? last;
      return events;
    },
  };
}

/** Hamlet's message to Denmark > widgets. */
const sendWidget = (content: string) =>
  call("hamlet", "POST", "/messages", {
    type: "channel",
    to: String(channels.Denmark),
    topic: "widgets",
    content,
  });

const ofType = (events: Record<string, unknown>[], type: string) =>
  events.filter((e) => e.type === type);

describe("the app starts", () => {
  it("reads the server settings and logs in with a password", async () => {
    const settings = await server.call("GET", "/api/v1/server_settings");
    expect(flutterProblems("GetServerSettingsResult", settings.body)).toEqual([]);
    const login = await server.call("POST", "/api/v1/fetch_api_key", {
      form: { username: cast.person("hamlet").email, password: DEMO_PASSWORD },
    });
    expect(login.status).toBe(200);
    expect(flutterProblems("FetchApiKeyResult", login.body)).toEqual([]);
  });

  it("registers as the app does: every key the app requires, presence in the modern form", async () => {
    for (const who of ["hamlet", "othello"])
      expect((await call(who, "POST", "/users/me/presence", { status: "active" })).status).toBe(
        200,
      );
    const { snapshot } = await appQueue("othello");
    const presences = snapshot.presences as Record<string, unknown>;
    const hamlet = presences[String(cast.id("hamlet"))] as Record<string, unknown>;
    expect(Object.keys(hamlet).sort()).toEqual(["active_timestamp", "idle_timestamp"]);
    expect(snapshot.realm_wildcard_mention_policy).toBe(5);
    // The app's presence ping (slim_presence) answers the modern form too.
    const ping = await call("hamlet", "POST", "/users/me/presence", {
      status: "active",
      slim_presence: "true",
      new_user_input: "true",
    });
    expect(flutterProblems("UpdatePresenceResult", ping.body)).toEqual([]);
    const own = (ping.body.presences as Record<string, unknown>)[String(cast.id("hamlet"))];
    expect(flutterProblems("PerUserPresence", own)).toEqual([]);
  });

  it("reads the inbox's messages as the app parses them", async () => {
    const reply = await server.call("GET", "/api/v1/messages", {
      ...cast.as("othello"),
      query: {
        narrow: "[]",
        anchor: "newest",
        num_before: "100",
        num_after: "0",
        apply_markdown: "true",
        allow_empty_topic_name: "true",
        client_gravatar: "false",
      },
    });
    expect(reply.status).toBe(200);
    expect((reply.body.messages as unknown[]).length).toBeGreaterThan(0);
    expect(flutterProblems("GetMessagesResult", reply.body)).toEqual([]);
  });
});

describe("a session", () => {
  it("sends with a local id, edits, resolves a topic, and each user's events parse", async () => {
    const hamlet = await appQueue("hamlet");
    const othello = await appQueue("othello");
    const sent = await call("hamlet", "POST", "/messages", {
      type: "channel",
      to: String(channels.Denmark),
      topic: "mobile",
      content: "Sent from **the app**",
      queue_id: hamlet.queueId,
      local_id: "1234.01",
      read_by_sender: "true",
    });
    expect(sent.status).toBe(200);
    expect(flutterProblems("SendMessageResult", sent.body)).toEqual([]);
    const id = sent.body.id as number;
    // The sender's own queue is told which of its local echoes this is; nobody else's is.
    const [own] = ofType(await hamlet.poll(), "message");
    const [theirs] = ofType(await othello.poll(), "message");
    expect(own?.local_message_id).toBe("1234.01");
    expect(theirs).toBeDefined();
    expect(theirs?.local_message_id).toBeUndefined();

    // An edit from content the client no longer has is refused.
    const stale = await call("hamlet", "PATCH", `/messages/${String(id)}`, {
      content: "Edited",
      prev_content_sha256: createHash("sha256").update("something else").digest("hex"),
    });
    expect([stale.status, stale.body]).toEqual([
      400,
      apiError(
        "'prev_content_sha256' value does not match the expected value.",
        "EXPECTATION_MISMATCH",
      ),
    ]);
    const edited = await call("hamlet", "PATCH", `/messages/${String(id)}`, {
      content: "Edited from **the app**",
      prev_content_sha256: createHash("sha256").update("Sent from **the app**").digest("hex"),
    });
    expect(edited.status).toBe(200);
    expect(flutterProblems("UpdateMessageResult", edited.body)).toEqual([]);
    // Each user is told their own flags after the edit.
    const [hamletEdit] = ofType(await hamlet.poll(), "update_message");
    const [othelloEdit] = ofType(await othello.poll(), "update_message");
    expect(hamletEdit?.flags).toEqual(["read"]);
    expect(othelloEdit?.flags).toEqual([]);

    // Resolving the topic is a move: its events parse too, and `with` finds the message after it.
    const resolved = await call("hamlet", "PATCH", `/messages/${String(id)}`, {
      topic: "✔ mobile",
      propagate_mode: "change_all",
    });
    expect(resolved.status).toBe(200);
    expect(ofType(await othello.poll(), "update_message")).toHaveLength(1);
    await hamlet.poll();
    const permalink = await server.call("GET", "/api/v1/messages", {
      ...cast.as("othello"),
      query: {
        narrow: JSON.stringify([
          { operator: "channel", operand: channels.Denmark },
          { operator: "topic", operand: "mobile" },
          { operator: "with", operand: id },
        ]),
        anchor: String(id),
        num_before: "10",
        num_after: "10",
      },
    });
    expect(permalink.status).toBe(200);
    expect(flutterProblems("GetMessagesResult", permalink.body)).toEqual([]);
    expect(
      (permalink.body.messages as { id: number; subject: string }[]).map((m) => m.id),
    ).toContain(id);
    expect(
      (permalink.body.messages as { subject: string }[]).every((m) => m.subject === "✔ mobile"),
    ).toBe(true);

    // A reaction, reading it, typing: each event parses.
    expect(
      (
        await call("othello", "POST", `/messages/${String(id)}/reactions`, {
          emoji_name: "octopus",
          emoji_code: "1f419",
          reaction_type: "unicode_emoji",
        })
      ).status,
    ).toBe(200);
    const read = await call("othello", "POST", "/messages/flags", {
      messages: JSON.stringify([id]),
      op: "add",
      flag: "read",
    });
    expect(flutterProblems("UpdateMessageFlagsResult", read.body)).toEqual([]);
    expect(
      (
        await call("othello", "POST", "/typing", {
          type: "channel",
          stream_id: String(channels.Denmark),
          topic: "✔ mobile",
          op: "start",
        })
      ).status,
    ).toBe(200);
    const seen = (await othello.poll()).map((e) => e.type);
    expect(seen).toEqual(expect.arrayContaining(["reaction", "update_message_flags"]));
    expect(ofType(await hamlet.poll(), "typing")).toHaveLength(1);
  });

  it("votes in a poll and checks a to-do item, and the widgets' events parse", async () => {
    const othello = await appQueue("othello");
    const poll = await sendWidget("/poll Tea or coffee?\n- Tea\n* Coffee\n\n");
    expect(poll.status).toBe(200);
    const pollId = poll.body.id as number;
    // The message carries its widget, as the app parses it.
    const [sent] = ofType(await othello.poll(), "message");
    const widget = (sent?.message as { submessages: { content: string; sender_id: number }[] })
      .submessages;
    expect(widget).toHaveLength(1);
    expect(JSON.parse(widget[0]?.content ?? "")).toEqual({
      widget_type: "poll",
      extra_data: { question: "Tea or coffee?", options: ["Tea", "Coffee"] },
    });
    expect(flutterProblems("PollWidgetData", JSON.parse(widget[0]?.content ?? ""))).toEqual([]);
    const vote = JSON.stringify({ type: "vote", key: "canned,1", vote: 1 });
    const voted = await call("othello", "POST", "/submessage", {
      message_id: String(pollId),
      msg_type: "widget",
      content: vote,
    });
    expect(voted.status).toBe(200);
    const [event] = ofType(await othello.poll(), "submessage");
    expect(event).toMatchObject({
      message_id: pollId,
      sender_id: cast.id("othello"),
      msg_type: "widget",
      content: vote,
    });
    // A fetch shows the widget and the vote, in order.
    const fetched = await call("othello", "GET", `/messages/${String(pollId)}`);
    const submessages = (fetched.body.message as { submessages: { content: string }[] })
      .submessages;
    expect(submessages.map((m) => m.content)).toEqual([widget[0]?.content, vote]);

    const todo = await sendWidget("/todo Chores\nDishes: before noon\nLaundry");
    const todoId = todo.body.id as number;
    const fetchedTodo = await call("othello", "GET", `/messages/${String(todoId)}`);
    const made = (fetchedTodo.body.message as { submessages: { content: string }[] }).submessages;
    expect(JSON.parse(made[0]?.content ?? "")).toEqual({
      widget_type: "todo",
      extra_data: {
        task_list_title: "Chores",
        tasks: [
          { task: "Dishes", desc: "before noon" },
          { task: "Laundry", desc: "" },
        ],
      },
    });
    const strike = await call("othello", "POST", "/submessage", {
      message_id: String(todoId),
      msg_type: "widget",
      content: JSON.stringify({ type: "strike", key: "0,canned" }),
    });
    expect(strike.status).toBe(200);
    expect(ofType(await othello.poll(), "submessage")).toHaveLength(1);
  });

  it("sets a status and clears its emoji as the app does", async () => {
    const othello = await appQueue("othello");
    const set = await call("hamlet", "POST", "/users/me/status", {
      status_text: "On the go",
      emoji_name: "car",
      emoji_code: "1f697",
      reaction_type: "unicode_emoji",
    });
    expect(set.status).toBe(200);
    const cleared = await call("hamlet", "POST", "/users/me/status", {
      status_text: "",
      emoji_name: "",
      emoji_code: "",
      reaction_type: "",
    });
    expect(cleared.status).toBe(200);
    const statuses = ofType(await othello.poll(), "user_status");
    expect(statuses.map((s) => s.emoji_name)).toEqual(["car", ""]);
    const row = await server.db.prisma.user.findUniqueOrThrow({ where: { id: cast.id("hamlet") } });
    expect([row.status_text, row.status_emoji_name]).toEqual(["", ""]);
  });

  it("reports a message with a type from register, and its device's events parse", async () => {
    const moderators = await call("iago", "POST", "/channels/create", {
      name: "app moderation",
      invite_only: "true",
      subscribers: JSON.stringify([cast.id("iago")]),
    });
    const iago = await appQueue("iago");
    await call("iago", "PATCH", "/realm", {
      moderation_request_channel_id: String(moderators.body.id),
    });
    const hamlet = await appQueue("hamlet");
    // The app offers the types register lists, and "other" needs an explanation.
    const types = hamlet.snapshot.server_report_message_types as { key: string }[];
    expect(types.map((t) => t.key)).toContain("other");
    expect(hamlet.snapshot.realm_moderation_request_channel_id).toBe(moderators.body.id);
    const sent = await call("othello", "POST", "/messages", {
      type: "channel",
      to: String(channels.Denmark),
      topic: "reported",
      content: "Buy cheap watches",
    });
    const reported = await call("hamlet", "POST", `/messages/${String(sent.body.id)}/report`, {
      report_type: "other",
      description: "Selling things",
    });
    expect(reported.body).toEqual({ result: "success", msg: "" });
    const posted = ofType(await iago.poll(), "message").map(
      (e) => (e.message as { stream_id?: number }).stream_id,
    );
    expect(posted).toContain(moderators.body.id);

    // The app registers its device (lib/api/route/account.dart) and hears of it.
    const device = await call("hamlet", "POST", "/register_client_device");
    expect(ofType(await hamlet.poll(), "device")).toEqual([
      expect.objectContaining({ op: "add", device_id: device.body.device_id }),
    ]);
  });

  it("subscribes to a channel, and the subscription events parse", async () => {
    const hamlet = await appQueue("hamlet");
    const reply = await call("hamlet", "POST", "/users/me/subscriptions", {
      subscriptions: JSON.stringify([{ name: "mobile made" }]),
    });
    expect(reply.status).toBe(200);
    expect((await hamlet.poll()).map((e) => e.type)).toEqual(
      expect.arrayContaining(["stream", "subscription"]),
    );
  });

  it("hears of a new channel folder, and of a group's deactivation as it can show it", async () => {
    const app = await appQueue("othello");
    const legacy = await listenAs(server, cast.as("othello"), ["user_group", "channel_folder"]);
    const folder = await call("iago", "POST", "/channel_folders/create", {
      name: "Mobile folder",
      description: "For *phones*",
    });
    expect(folder.status).toBe(200);
    const group = await call("hamlet", "POST", "/user_groups/create", {
      name: "Pocket",
      description: "Soon gone",
      members: JSON.stringify([cast.id("hamlet")]),
    });
    expect(group.status).toBe(200);
    const groupId = group.body.group_id as number;
    expect(
      (await call("hamlet", "POST", `/user_groups/${String(groupId)}/deactivate`)).status,
    ).toBe(200);
    const events = await app.poll();
    const [added] = ofType(events, "channel_folder");
    expect(added).toMatchObject({
      op: "add",
      channel_folder: {
        id: folder.body.channel_folder_id,
        name: "Mobile folder",
        rendered_description: "<p>For <em>phones</em></p>",
      },
    });
    // The app filters deactivated groups itself: an update; a client that cannot, a removal.
    expect(ofType(events, "user_group").at(-1)).toMatchObject({
      op: "update",
      group_id: groupId,
      data: { deactivated: true },
    });
    expect((await legacy()).filter((e) => e.type === "user_group").at(-1)).toEqual({
      type: "user_group",
      op: "remove",
      group_id: groupId,
    });
  });

  it("keeps a queue registered with idle_queue_timeout=mobile for 12 hours", async () => {
    const mobile = await appQueue("hamlet");
    const web = await call("hamlet", "POST", "/register", { event_types: '["message"]' });
    // Neither polled for an hour.
    await server.db.prisma.eventQueue.updateMany({
      where: { id: { in: [mobile.queueId, web.body.queue_id as string] } },
      data: { last_poll_time: new Date(Date.now() - 3_600_000) },
    });
    await collectIdleQueues(server.db, 600_000);
    const left = await server.db.prisma.eventQueue.findMany({
      where: { id: { in: [mobile.queueId, web.body.queue_id as string] } },
      select: { id: true },
    });
    expect(left.map((q) => q.id)).toEqual([mobile.queueId]);
    expect(await mobile.poll()).toEqual([]);
    // A timeout past Zulip's cap is the cap: 7 days.
    const long = await call("hamlet", "POST", "/register", { idle_queue_timeout: "999999999999" });
    const stored = await server.db.prisma.eventQueue.findUniqueOrThrow({
      where: { id: long.body.queue_id as string },
    });
    expect(stored.options).toMatchObject({ idle_timeout_seconds: 604_800 });
    const bad = await call("hamlet", "POST", "/register", { idle_queue_timeout: "forever" });
    expect([bad.status, bad.body]).toEqual([400, apiError("Invalid idle_queue_timeout")]);
  });
});

describe("hostile input on the app's routes", () => {
  it("bounds local_id, wants it with queue_id, and stores nothing it refuses", async () => {
    const before = await server.db.prisma.message.count();
    const send = (extra: Record<string, string>) =>
      call("hamlet", "POST", "/messages", {
        type: "direct",
        to: JSON.stringify([cast.id("othello")]),
        content: "echo",
        ...extra,
      });
    const long = await send({ queue_id: "q", local_id: "1".repeat(65) });
    expect([long.status, long.body]).toEqual([
      400,
      apiError("local_id is too long (limit: 64 characters)"),
    ]);
    const alone = await send({ queue_id: "q" });
    expect([alone.status, alone.body]).toEqual([
      400,
      {
        ...apiError("Missing 'local_id' argument", "REQUEST_VARIABLE_MISSING"),
        var_name: "local_id",
      },
    ]);
    // Another user's queue id echoes nothing to anyone: the message is sent, the id is no one's.
    const othello = await appQueue("othello");
    const foreign = await send({ queue_id: othello.queueId, local_id: "7.01" });
    expect(foreign.status).toBe(200);
    const [seen] = ofType(await othello.poll(), "message");
    expect(seen).toBeDefined();
    expect(seen?.local_message_id).toBeUndefined();
    expect(await server.db.prisma.message.count()).toBe(before + 1);
  });

  it("refuses a malformed with, a second with, and an oversized hash", async () => {
    const narrow = async (terms: unknown[]) =>
      server.call("GET", "/api/v1/messages", {
        ...cast.as("othello"),
        query: { narrow: JSON.stringify(terms), anchor: "newest", num_before: "1", num_after: "0" },
      });
    const bad = await narrow([{ operator: "with", operand: "x1" }]);
    expect([bad.status, bad.body.msg]).toEqual([400, 'Invalid narrow operand for with: "x1"']);
    const twice = await narrow([
      { operator: "with", operand: 1 },
      { operator: "with", operand: 2 },
    ]);
    expect([twice.status, twice.body.msg]).toEqual([400, "Duplicate 'with' operators."]);
    // A message the caller cannot read leaves the narrow as it is, without `with`.
    const unknown = await narrow([
      { operator: "channel", operand: channels.Denmark },
      { operator: "with", operand: 2_000_000_000 },
    ]);
    expect(unknown.status).toBe(200);
    const hash = await call("hamlet", "PATCH", "/messages/1", {
      content: "x",
      prev_content_sha256: "f".repeat(65),
    });
    expect([hash.status, hash.body.msg]).toEqual([
      400,
      "prev_content_sha256 is too long (limit: 64 characters)",
    ]);
  });

  it("checks widget changes as Zulip does, and stores none it refuses", async () => {
    const poll = await sendWidget("/poll Hostile?");
    const plain = await sendWidget("no widget here");
    const dm = await call("hamlet", "POST", "/messages", {
      type: "direct",
      to: JSON.stringify([cast.id("cordelia")]),
      content: "/poll Private?",
    });
    const count = () => server.db.prisma.submessage.count();
    const before = await count();
    const change = (who: string, id: unknown, content: string, msgType = "widget") =>
      call(who, "POST", "/submessage", {
        message_id: String(id),
        msg_type: msgType,
        content,
      });
    for (const [who, id, content, msg] of [
      ["othello", poll.body.id, "{not json", "Invalid json for submessage"],
      [
        "othello",
        poll.body.id,
        '{"type":"vote","key":"x","vote":2}',
        "poll data['vote'] is not allowed",
      ],
      ["othello", poll.body.id, '{"type":"vote","key":"x"}', "poll data is missing key 'vote'"],
      [
        "othello",
        poll.body.id,
        '{"type":"vote","key":"x","vote":1,"extra":1}',
        "Unexpected arguments: extra",
      ],
      [
        "othello",
        poll.body.id,
        '{"type":"question","question":"Mine?"}',
        "You can't edit a question unless you are the author.",
      ],
      ["othello", poll.body.id, '{"type":"bomb"}', "Unknown type for poll data: bomb"],
      ["othello", poll.body.id, "[1]", "poll data is not a dict"],
      [
        "othello",
        plain.body.id,
        '{"type":"vote"}',
        "You cannot attach a submessage to this message.",
      ],
      ["othello", 2_000_000_000, "{}", "Invalid message(s)"],
    ] as const) {
      const reply = await change(who, id, content);
      expect([reply.status, reply.body.msg]).toEqual([400, msg]);
    }
    const long = await change("othello", poll.body.id, `"${"x".repeat(10_000)}"`);
    expect([long.status, long.body.msg]).toEqual([
      400,
      "content is too long (limit: 10000 characters)",
    ]);
    // A message othello does not have (hamlet's to cordelia), and an id past int32.
    const notHis = await change("othello", dm.body.id, '{"type":"vote","key":"x","vote":1}');
    expect([notHis.status, notHis.body.msg]).toEqual([400, "Invalid message(s)"]);
    const huge = await change("othello", 2_147_483_648, "{}");
    expect([huge.status, huge.body.msg]).toEqual([400, "message_id is too large"]);
    const other = await change("othello", poll.body.id, "{}", "zform");
    expect([other.status, other.body.msg]).toEqual([400, "Invalid msg_type"]);
    expect(await count()).toBe(before);
    const edit = await call("hamlet", "PATCH", `/messages/${String(poll.body.id)}`, {
      content: "/poll Changed?",
    });
    expect([edit.status, edit.body.msg]).toEqual([400, "Widgets cannot be edited."]);
    // The author may change the question.
    expect(
      (await change("hamlet", poll.body.id, '{"type":"question","question":"Sure?"}')).status,
    ).toBe(200);
  });
});
