import { setTimeout as sleep } from "node:timers/promises";
import { deliverDueScheduledMessages } from "../src/actions/scheduled-messages";
import {
  type TestServer,
  apiError,
  authOf,
  channelIds,
  channelMissing,
  listenAs,
  startTestServer,
} from "./support/server";
import { fullEventsSchema, zulipResponseSchema } from "./support/zulip-schema";

/**
 * Scheduled messages (GET, POST /scheduled_messages, PATCH and DELETE
 * /scheduled_messages/{id}, register's `scheduled_messages`): checked as a
 * send is when scheduled and when sent, sent by the server at their time
 * exactly once (two schedulers racing), or failed with Zulip's notice.
 * Answers and events are checked against Zulip 10.2's whole document.
 */
let server: TestServer;
let channels: Record<string, number>;
const fullEvents = fullEventsSchema();
const validateList = zulipResponseSchema("full", "/scheduled_messages", "get");
const validateCreate = zulipResponseSchema("full", "/scheduled_messages", "post");
const validateMissing = zulipResponseSchema(
  "full",
  "/scheduled_messages/{scheduled_message_id}",
  "delete",
  "404",
);

beforeAll(async () => {
  // The server's own scheduler stays out of the way: these tests send by calling it.
  server = await startTestServer({ env: { CHAT_REMINDER_POLL_SECONDS: "3600" } });
  channels = await channelIds(server);
});
afterAll(() => server.close());

const as = async (who: string) => authOf(await server.person(who));
const inSeconds = (seconds: number) => String(Math.floor(Date.now() / 1000) + seconds);
const channel = (name: string): number => {
  const id = channels[name];
  if (id === undefined) throw new Error(name);
  return id;
};

const schedule = async (who: string, form: Record<string, string>) =>
  server.call("POST", "/api/v1/scheduled_messages", { ...(await as(who)), form });

const stored = () => server.db.prisma.scheduledMessage.count();

/** The events since the last call, each checked against the whole 10.2 document. */
async function described(listen: () => Promise<Record<string, unknown>[]>) {
  const events = await listen();
  expect(fullEvents({ events: events.map((event, id) => ({ id, ...event })) })).toEqual([]);
  return events;
}

describe("scheduling", () => {
  it("schedules a channel message and a direct one, listed soonest first and told to the sender", async () => {
    const hamlet = await server.person("hamlet");
    const othello = await server.person("othello");
    const listen = await listenAs(server, authOf(hamlet), ["scheduled_messages"]);
    const later = inSeconds(7200);
    const sooner = inSeconds(3600);
    const toChannel = await schedule("hamlet", {
      type: "stream",
      to: String(channel("Verona")),
      topic: "plans",
      content: "The **play** is at noon",
      scheduled_delivery_timestamp: later,
    });
    expect(toChannel.status).toBe(200);
    expect(validateCreate(toChannel.body)).toEqual([]);
    const direct = await schedule("hamlet", {
      type: "direct",
      to: JSON.stringify([othello.id]),
      content: "A word, my lord",
      scheduled_delivery_timestamp: sooner,
      read_by_sender: "true",
    });
    expect(direct.status).toBe(200);
    const list = await server.call("GET", "/api/v1/scheduled_messages", authOf(hamlet));
    expect(validateList(list.body)).toEqual([]);
    expect(list.body.scheduled_messages).toEqual([
      {
        scheduled_message_id: direct.body.scheduled_message_id,
        type: "private",
        to: [othello.id],
        content: "A word, my lord",
        rendered_content: "<p>A word, my lord</p>",
        scheduled_delivery_timestamp: Number(sooner),
        failed: false,
      },
      {
        scheduled_message_id: toChannel.body.scheduled_message_id,
        type: "stream",
        to: channel("Verona"),
        topic: "plans",
        content: "The **play** is at noon",
        rendered_content: "<p>The <strong>play</strong> is at noon</p>",
        scheduled_delivery_timestamp: Number(later),
        failed: false,
      },
    ]);
    const events = await described(listen);
    expect(events.map((e) => [e.type, e.op])).toEqual([
      ["scheduled_messages", "add"],
      ["scheduled_messages", "add"],
    ]);
    const state = await server.call("POST", "/api/v1/register", {
      ...authOf(hamlet),
      form: { fetch_event_types: JSON.stringify(["scheduled_messages"]) },
    });
    expect(state.body.scheduled_messages).toEqual(list.body.scheduled_messages);
    // Others see none of them.
    const others = await server.call("GET", "/api/v1/scheduled_messages", authOf(othello));
    expect(others.body.scheduled_messages).toEqual([]);
  });

  it("refuses what a send would refuse, and a time in the past, storing nothing", async () => {
    const before = await stored();
    const cases: [Record<string, string>, unknown][] = [
      [
        {
          type: "stream",
          to: "999999",
          topic: "t",
          content: "x",
          scheduled_delivery_timestamp: inSeconds(60),
        },
        channelMissing(999_999),
      ],
      [
        {
          type: "direct",
          to: "[999999]",
          content: "x",
          scheduled_delivery_timestamp: inSeconds(60),
        },
        apiError("Invalid user ID 999999"),
      ],
      [
        {
          type: "stream",
          to: String(channel("Verona")),
          topic: "t",
          content: "x",
          scheduled_delivery_timestamp: inSeconds(-60),
        },
        apiError("Scheduled delivery time must be in the future."),
      ],
      [
        {
          type: "stream",
          to: String(channel("Verona")),
          topic: "t",
          content: "   ",
          scheduled_delivery_timestamp: inSeconds(60),
        },
        apiError("Message must not be empty"),
      ],
      [
        {
          type: "stream",
          to: JSON.stringify([channel("Verona")]),
          topic: "t",
          content: "x",
          scheduled_delivery_timestamp: inSeconds(60),
        },
        apiError("Invalid data type for channel"),
      ],
      [
        {
          type: "stream",
          to: String(channel("core team")),
          topic: "t",
          content: "x",
          scheduled_delivery_timestamp: inSeconds(60),
        },
        channelMissing(channel("core team")),
      ],
    ];
    for (const [form, answer] of cases)
      expect([form, (await schedule("othello", form)).body]).toEqual([form, answer]);
    expect(await stored()).toBe(before);
  });
});

describe("changing and cancelling", () => {
  it("edits content, time and destination, checked again, with an update event", async () => {
    const hamlet = await server.person("hamlet");
    const created = await schedule("hamlet", {
      type: "stream",
      to: String(channel("Verona")),
      topic: "edits",
      content: "first draft",
      scheduled_delivery_timestamp: inSeconds(600),
    });
    const id = created.body.scheduled_message_id as number;
    const listen = await listenAs(server, authOf(hamlet), ["scheduled_messages"]);
    const patch = async (who: string, form: Record<string, string>) =>
      server.call("PATCH", `/api/v1/scheduled_messages/${id}`, { ...(await as(who)), form });
    const when = inSeconds(900);
    expect(
      (await patch("hamlet", { content: "final *draft*", scheduled_delivery_timestamp: when }))
        .body,
    ).toEqual({ result: "success", msg: "" });
    const [update] = await described(listen);
    expect(update).toEqual({
      type: "scheduled_messages",
      op: "update",
      scheduled_message: {
        scheduled_message_id: id,
        type: "stream",
        to: channel("Verona"),
        topic: "edits",
        content: "final *draft*",
        rendered_content: "<p>final <em>draft</em></p>",
        scheduled_delivery_timestamp: Number(when),
        failed: false,
      },
    });
    const othello = await server.person("othello");
    expect((await patch("hamlet", { type: "direct" })).body).toEqual(
      apiError("Recipient required when updating type of scheduled message."),
    );
    expect(
      (await patch("hamlet", { type: "direct", to: JSON.stringify([othello.id]) })).status,
    ).toBe(200);
    const row = await server.db.prisma.scheduledMessage.findUniqueOrThrow({ where: { id } });
    expect([row.channel_id, row.to_user_ids]).toEqual([null, [othello.id]]);
    expect((await patch("hamlet", { type: "stream", to: String(channel("Verona")) })).body).toEqual(
      apiError("Topic required when updating scheduled message type to channel."),
    );
    expect((await patch("hamlet", {})).body).toEqual(apiError("Nothing to change"));
    // Another person's scheduled message does not exist for them.
    const foreign = await patch("othello", { content: "mine now" });
    expect([foreign.status, foreign.body]).toEqual([
      404,
      apiError("Scheduled message does not exist"),
    ]);
    expect(validateMissing(foreign.body)).toEqual([]);
  });

  it("cancels one, which is then never sent", async () => {
    const hamlet = await server.person("hamlet");
    const created = await schedule("hamlet", {
      type: "stream",
      to: String(channel("Verona")),
      topic: "cancelled",
      content: "never",
      scheduled_delivery_timestamp: inSeconds(3),
    });
    const id = created.body.scheduled_message_id as number;
    const listen = await listenAs(server, authOf(hamlet), ["scheduled_messages"]);
    const url = `/api/v1/scheduled_messages/${id}`;
    expect((await server.call("DELETE", url, authOf(hamlet))).body).toEqual({
      result: "success",
      msg: "",
    });
    expect(await described(listen)).toEqual([
      { type: "scheduled_messages", op: "remove", scheduled_message_id: id },
    ]);
    expect((await server.call("DELETE", url, authOf(hamlet))).status).toBe(404);
    await deliverDueScheduledMessages(server.db, new Date(Date.now() + 60_000));
    expect(await server.db.prisma.message.count({ where: { topic: "cancelled" } })).toBe(0);
  });
});

describe("sending", () => {
  it("sends each due message once as its sender, with two schedulers racing", async () => {
    const hamlet = await server.person("hamlet");
    const created: number[] = [];
    for (let n = 0; n < 12; n++) {
      const reply = await schedule("hamlet", {
        type: "stream",
        to: String(channel("Verona")),
        topic: "race",
        content: `line ${n}`,
        // Far enough ahead to stay in the future while twelve are made on a slow machine.
        scheduled_delivery_timestamp: inSeconds(60),
      });
      expect([reply.status, reply.body.result]).toEqual([200, "success"]);
      created.push(reply.body.scheduled_message_id as number);
    }
    const listen = await listenAs(server, authOf(hamlet), ["scheduled_messages"]);
    const replica = (await server.db.replica?.()) ?? server.db;
    const later = new Date(Date.now() + 120_000);
    try {
      const [first, second] = await Promise.all([
        deliverDueScheduledMessages(server.db, later, 120_000),
        deliverDueScheduledMessages(replica, later, 120_000),
      ]);
      // Any that failed name why (a failure here would say which and how).
      const failed = await server.db.prisma.scheduledMessage.findMany({
        where: { id: { in: created }, failed: true },
        select: { id: true, failure_message: true },
      });
      expect({ sent: first + second, failed }).toEqual({ sent: 12, failed: [] });
    } finally {
      if (replica !== server.db) await replica.close();
    }
    const sent = await server.db.prisma.message.findMany({
      where: { topic: "race" },
      orderBy: { id: "asc" },
    });
    expect(sent.map((m) => [m.sender_id, m.content])).toEqual(
      created.map((_, n) => [hamlet.id, `line ${n}`]),
    );
    const rows = await server.db.prisma.scheduledMessage.findMany({
      where: { id: { in: created } },
    });
    expect(rows.every((r) => r.delivered)).toBe(true);
    expect(new Set(rows.map((r) => r.delivered_message_id)).size).toBe(12);
    const events = await described(listen);
    expect(events.filter((e) => e.op === "remove")).toHaveLength(12);
    expect(await deliverDueScheduledMessages(server.db, later)).toBe(0);
    const left = await server.call("GET", "/api/v1/scheduled_messages", authOf(hamlet));
    expect(
      (left.body.scheduled_messages as { scheduled_message_id: number }[]).filter((m) =>
        created.includes(m.scheduled_message_id),
      ),
    ).toEqual([]);
  });

  it("marks one its sender can no longer send failed, and tells them", async () => {
    const cordelia = await server.person("cordelia");
    const created = await schedule("cordelia", {
      type: "stream",
      to: String(channel("Verona")),
      topic: "too late",
      content: "I was here",
      scheduled_delivery_timestamp: inSeconds(3),
    });
    const id = created.body.scheduled_message_id as number;
    // Only administrators may post there by the time it is due.
    const admins = await server.db.prisma.userGroup.findFirstOrThrow({
      where: { name: "role:administrators", realm: { subdomain: "" } },
    });
    await server.db.prisma.channel.update({
      where: { id: channel("Verona") },
      data: { can_send_message_group_id: admins.id },
    });
    const listen = await listenAs(server, authOf(cordelia), ["scheduled_messages", "message"]);
    try {
      expect(await deliverDueScheduledMessages(server.db, new Date(Date.now() + 5000))).toBe(0);
    } finally {
      const everyone = await server.db.prisma.userGroup.findFirstOrThrow({
        where: { name: "role:everyone", realm: { subdomain: "" } },
      });
      await server.db.prisma.channel.update({
        where: { id: channel("Verona") },
        data: { can_send_message_group_id: everyone.id },
      });
    }
    const row = await server.db.prisma.scheduledMessage.findUniqueOrThrow({ where: { id } });
    expect([row.delivered, row.failed]).toEqual([false, true]);
    expect(row.failure_message).toMatch(/permission|not authorized|administrators/i);
    const events = await described(listen);
    expect(events[0]).toMatchObject({
      type: "scheduled_messages",
      op: "update",
      scheduled_message: { scheduled_message_id: id, failed: true },
    });
    const notice = events[1] as { type: string; message: { content: string } };
    expect(notice.type).toBe("message");
    expect(notice.message.content).toContain("was not sent because of the following error");
    expect(await server.db.prisma.message.count({ where: { topic: "too late" } })).toBe(0);
    // A failed one is listed as failed, and needs a new time to be scheduled again.
    const patched = await server.call("PATCH", `/api/v1/scheduled_messages/${id}`, {
      ...authOf(cordelia),
      form: { content: "Again" },
    });
    expect(patched.body).toEqual(apiError("Scheduled delivery time must be in the future."));
    const again = await server.call("PATCH", `/api/v1/scheduled_messages/${id}`, {
      ...authOf(cordelia),
      form: { scheduled_delivery_timestamp: inSeconds(3) },
    });
    expect(again.status).toBe(200);
    expect(await deliverDueScheduledMessages(server.db, new Date(Date.now() + 5000))).toBe(1);
    expect(await server.db.prisma.message.count({ where: { topic: "too late" } })).toBe(1);
  });
});

describe("the server's scheduler", () => {
  it("sends a due message by itself", async () => {
    const busy = await startTestServer({ env: { CHAT_REMINDER_POLL_SECONDS: "0.2" } });
    try {
      const hamlet = await busy.person("hamlet");
      const verona = (await channelIds(busy)).Verona ?? 0;
      const reply = await busy.call("POST", "/api/v1/scheduled_messages", {
        ...authOf(hamlet),
        form: {
          type: "stream",
          to: String(verona),
          topic: "on time",
          content: "right on time",
          scheduled_delivery_timestamp: inSeconds(3),
        },
      });
      expect(reply.status).toBe(200);
      let sent = 0;
      for (let waited = 0; waited < 30_000 && sent === 0; waited += 100) {
        await sleep(100);
        sent = await busy.db.prisma.message.count({ where: { topic: "on time" } });
      }
      expect(sent).toBe(1);
    } finally {
      await busy.close();
    }
  });
});
