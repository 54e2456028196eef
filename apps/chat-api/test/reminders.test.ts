import { deliverDueReminders } from "../src/actions/reminders";
import { type TestDatabase, freshDatabase } from "./support/database";
import { type Cast, type TestServer, apiError, loadCast, startTestServer } from "./support/server";
import { zulipResponseSchema } from "./support/zulip-schema";

const validateDelete = zulipResponseSchema("subset", "/reminders/{reminder_id}", "delete");
const validateDelete404 = zulipResponseSchema(
  "subset",
  "/reminders/{reminder_id}",
  "delete",
  "404",
);

let db: TestDatabase;
let server: TestServer;
let cast: Cast;
let messageId: number;

beforeAll(async () => {
  db = await freshDatabase("seeded");
  // The server's own scheduler stays out of the way: these tests drive delivery.
  server = await startTestServer({ db, env: { CHAT_REMINDER_POLL_SECONDS: "3600" } });
  cast = await loadCast(server, ["hamlet", "othello", "cordelia"]);
  const received = await db.prisma.userMessage.findFirstOrThrow({
    where: { user_id: cast.id("othello") },
    orderBy: { message_id: "desc" },
  });
  messageId = received.message_id;
});

afterAll(async () => {
  await server.close();
  await db.close();
});

const as = (who: string) => cast.as(who);
const inSeconds = (s: number) => Math.floor(Date.now() / 1000) + s;
const create = (who: string, form: Record<string, unknown>) =>
  server.call("POST", "/api/v1/reminders", { ...as(who), form });

describe("reminders", () => {
  it("creates, lists and deletes a reminder", async () => {
    const when = inSeconds(3600);
    const reply = await create("othello", {
      message_id: messageId,
      scheduled_delivery_timestamp: when,
      note: "Answer this",
    });
    expect(reply.status).toBe(200);
    const reminderId = reply.body.reminder_id as number;
    const listed = await server.call("GET", "/api/v1/reminders", as("othello"));
    expect(listed.body.reminders).toEqual([
      expect.objectContaining({
        reminder_id: reminderId,
        type: "private",
        to: [cast.id("othello")],
        scheduled_delivery_timestamp: when,
        failed: false,
        reminder_target_message_id: messageId,
      }),
    ]);
    expect((await server.call("GET", "/api/v1/reminders", as("cordelia"))).body.reminders).toEqual(
      [],
    );
    const deleted = await server.call("DELETE", `/api/v1/reminders/${reminderId}`, as("othello"));
    expect(validateDelete(deleted.body)).toEqual([]);
    expect((await server.call("GET", "/api/v1/reminders", as("othello"))).body.reminders).toEqual(
      [],
    );
  });

  it.each([
    [{ message_id: 999_999, scheduled_delivery_timestamp: 4102444800 }, "Invalid message(s)"],
    [{ scheduled_delivery_timestamp: 1_000 }, "Scheduled delivery time must be in the future."],
    [{ note: "n".repeat(1001) }, "Maximum reminder note length: 1000 characters"],
  ])("refuses %j: %s", async (form, msg) => {
    const before = await db.prisma.reminder.count();
    const reply = await create("othello", {
      message_id: messageId,
      scheduled_delivery_timestamp: inSeconds(600),
      ...form,
    });
    expect([reply.status, reply.body]).toEqual([400, apiError(msg)]);
    expect(await db.prisma.reminder.count()).toBe(before);
  });

  it("answers 404 Reminder does not exist for an unknown reminder and another user's", async () => {
    const theirs = await create("othello", {
      message_id: messageId,
      scheduled_delivery_timestamp: inSeconds(600),
    });
    for (const reminderId of [999_999, theirs.body.reminder_id as number]) {
      const reply = await server.call("DELETE", `/api/v1/reminders/${reminderId}`, as("cordelia"));
      expect(validateDelete404(reply.body)).toEqual([]);
      expect([reply.status, reply.body]).toEqual([404, apiError("Reminder does not exist")]);
    }
    expect(
      await db.prisma.reminder.count({ where: { id: theirs.body.reminder_id as number } }),
    ).toBe(1);
  });

  it("sends reminders events", async () => {
    const queue = (
      await server.call("POST", "/api/v1/register", {
        ...as("hamlet"),
        form: { event_types: ["reminders"] },
      })
    ).body.queue_id as string;
    const hamletMessage = await db.prisma.userMessage.findFirstOrThrow({
      where: { user_id: cast.id("hamlet") },
    });
    const created = await create("hamlet", {
      message_id: hamletMessage.message_id,
      scheduled_delivery_timestamp: inSeconds(600),
    });
    await server.call(
      "DELETE",
      `/api/v1/reminders/${String(created.body.reminder_id)}`,
      as("hamlet"),
    );
    const events = await server.call("GET", "/api/v1/events", {
      ...as("hamlet"),
      query: { queue_id: queue, dont_block: true },
    });
    expect(events.body.events).toMatchObject([
      { type: "reminders", op: "add", reminders: [{ reminder_id: created.body.reminder_id }] },
      { type: "reminders", op: "remove", reminder_id: created.body.reminder_id },
    ]);
  });

  it("delivers each due reminder exactly once with two schedulers racing, never a deleted one", async () => {
    await db.prisma.reminder.deleteMany();
    const realm = await db.prisma.realm.findFirstOrThrow();
    const due = new Date(Date.now() - 1000);
    await db.prisma.reminder.createMany({
      data: Array.from({ length: 40 }, (_, n) => ({
        realm_id: realm.id,
        user_id: cast.id("othello"),
        message_id: messageId,
        note: `due ${n}`,
        scheduled_timestamp: due,
      })),
    });
    const cancelled = await create("othello", {
      message_id: messageId,
      scheduled_delivery_timestamp: inSeconds(1),
    });
    await server.call(
      "DELETE",
      `/api/v1/reminders/${String(cancelled.body.reminder_id)}`,
      as("othello"),
    );
    const botMessagesBefore = await db.prisma.message.count({
      where: { sender: { is_system_bot: true }, channel_id: null },
    });
    // A second replica: its own pool on PostgreSQL; PGlite shares the one connection.
    const replica = (await db.replica?.()) ?? db;
    const later = new Date(Date.now() + 5000);
    try {
      const [first, second] = await Promise.all([
        // A budget far past what 40 need: on a loaded machine the default 4 s may not be.
        deliverDueReminders(db, later, 120_000),
        deliverDueReminders(replica, later, 120_000),
      ]);
      expect(first + second).toBe(40);
    } finally {
      if (replica !== db) await replica.close();
    }
    const delivered = await db.prisma.reminder.findMany({ where: { delivered: true } });
    expect(delivered).toHaveLength(40);
    const messageIds = delivered.map((r) => r.delivered_message_id);
    expect(new Set(messageIds).size).toBe(40);
    expect(
      await db.prisma.message.count({
        where: { sender: { is_system_bot: true }, channel_id: null },
      }),
    ).toBe(botMessagesBefore + 40);
    const sample = await db.prisma.message.findUniqueOrThrow({ where: { id: messageIds[0] ?? 0 } });
    expect(sample.content).toMatch(/^You requested a reminder for message #\d+/);
    const holders = await db.prisma.userMessage.findMany({ where: { message_id: sample.id } });
    expect(holders.map((m) => m.user_id)).toContain(cast.id("othello"));
    expect(await deliverDueReminders(db, later)).toBe(0);
  });
});
