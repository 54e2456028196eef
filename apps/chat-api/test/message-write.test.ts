/**
 * A sent message is one write: its row, its recipients' rows and its events
 * in one statement (a transaction by itself), after reads that need none;
 * only a message that links uploaded files opens a transaction, for the
 * links. Run on both databases.
 */
import type { Database } from "../src/db/database";
import { doSendMessage } from "../src/actions/message-send";
import type { AuthedUser } from "../src/caches/auth";
import { type TestDatabase, freshDatabase } from "./support/database";
import { type Cast, type TestServer, loadCast, startTestServer } from "./support/server";

let db: TestDatabase;
let server: TestServer;
let cast: Cast;
let hamlet: AuthedUser;
let denmark: number;

beforeAll(async () => {
  db = await freshDatabase("seeded");
  server = await startTestServer({ db });
  cast = await loadCast(server, ["hamlet", "othello"]);
  const user = await db.prisma.user.findFirstOrThrow({
    where: { email: "hamlet@example.com" },
  });
  hamlet = { ...user, realm_deactivated: false };
  denmark = (
    await db.prisma.channel.findFirstOrThrow({
      where: { realm_id: user.realm_id, name: "Denmark" },
    })
  ).id;
});

afterAll(async () => {
  await server.close();
  await db.close();
});

/** `db`, counting the transactions opened on it. */
function counting(): { db: Database; transactions: () => number } {
  let opened = 0;
  return {
    db: {
      ...db,
      transaction: (work, options) => {
        opened += 1;
        return db.transaction(work, options);
      },
    },
    transactions: () => opened,
  };
}

/** The message's recipients' rows and its events in the log. */
async function stored(messageId: number) {
  const rows = await db.prisma.userMessage.findMany({
    where: { message_id: messageId },
    select: { user_id: true, flags: true },
  });
  const events = await db.prisma.eventLog.findMany({
    where: { event_type: "message", payload: { path: ["message", "id"], equals: messageId } },
    select: { user_ids: true, payload: true },
    orderBy: { id: "asc" },
  });
  return { rows, events };
}

describe("a sent message's write", () => {
  it("opens no transaction for a message that links no file, and stores the message, its rows and its events", async () => {
    const { db: watched, transactions } = counting();
    const id = await doSendMessage(watched, hamlet, {
      kind: "channel",
      to: denmark,
      topic: "one write",
      content: "To be or not to be",
    });
    expect(transactions()).toBe(0);
    const message = await db.prisma.message.findUniqueOrThrow({ where: { id } });
    expect([message.sender_id, message.channel_id, message.topic]).toEqual([
      hamlet.id,
      denmark,
      "one write",
    ]);
    const subscribers = await db.prisma.subscription.findMany({
      where: { channel_id: denmark, active: true, user: { is_active: true } },
      select: { user_id: true },
    });
    const { rows, events } = await stored(id);
    expect(rows.map((r) => r.user_id).sort((a, b) => a - b)).toEqual(
      subscribers.map((s) => s.user_id).sort((a, b) => a - b),
    );
    // The sender's own copy is read; the others' are not.
    expect(rows.find((r) => r.user_id === hamlet.id)?.flags).toBe(1n);
    expect(rows.filter((r) => r.user_id !== hamlet.id).every((r) => r.flags === 0n)).toBe(true);
    // One event for the sender (read), one for the rest, with the stored id and time.
    expect(events.map((e) => e.user_ids.length).sort((a, b) => a - b)).toEqual([
      1,
      rows.length - 1,
    ]);
    for (const { payload } of events) {
      const { message: view } = payload as { message: { id: number; timestamp: number } };
      expect(view.id).toBe(id);
      expect(view.timestamp).toBe(Math.floor(message.date_sent.getTime() / 1000));
    }
  });

  it("opens one transaction when the message links an uploaded file", async () => {
    const { db: watched, transactions } = counting();
    const realm = await db.prisma.realm.findUniqueOrThrow({ where: { id: hamlet.realm_id } });
    await doSendMessage(watched, hamlet, {
      kind: "channel",
      to: denmark,
      topic: "one write",
      content: `[a file](/user_uploads/${String(realm.id)}/ab/notes.txt)`,
    });
    expect(transactions()).toBe(1);
  });

  it("answers a refused send by channel id with the channel's error and stores nothing", async () => {
    const before = await db.prisma.message.count();
    const user = await db.prisma.user.findFirstOrThrow({
      where: { email: "othello@example.com" },
    });
    const othello = { ...user, realm_deactivated: false };
    const secret = await db.prisma.channel.findFirstOrThrow({
      where: { realm_id: user.realm_id, name: "core team" },
    });
    expect(secret.invite_only).toBe(true);
    // The message's reads beside the checks find the channel's subscribers all the same;
    // what they read is dropped.
    for (const [to, error] of [
      [999_999, "Channel with ID '999999' does not exist"],
      [secret.id, `Channel with ID '${String(secret.id)}' does not exist`],
    ] as const)
      await expect(
        doSendMessage(db, othello, { kind: "channel", to, topic: "t", content: "@**all** hi" }),
      ).rejects.toThrow(error);
    expect(await db.prisma.message.count()).toBe(before);
  });

  it("stores nothing when its events cannot be written", async () => {
    const before = await db.prisma.message.count();
    const rowsBefore = await db.prisma.userMessage.count();
    await db.sql.exec(`
      CREATE FUNCTION refuse_message_event() RETURNS trigger LANGUAGE plpgsql AS
        $$ BEGIN RAISE EXCEPTION 'no events today'; END $$;
      CREATE TRIGGER refuse_message_event BEFORE INSERT ON event_log
        FOR EACH ROW EXECUTE FUNCTION refuse_message_event();`);
    try {
      for (const form of [
        { type: "stream", to: denmark, topic: "lost", content: "Never stored" },
        { type: "direct", to: JSON.stringify([cast.id("othello")]), content: "Never stored" },
      ]) {
        const reply = await server.call("POST", "/api/v1/messages", {
          ...cast.as("hamlet"),
          form,
        });
        expect(reply.status).toBe(500);
      }
    } finally {
      await db.sql.exec(
        `DROP TRIGGER refuse_message_event ON event_log; DROP FUNCTION refuse_message_event();`,
      );
    }
    expect(await db.prisma.message.count()).toBe(before);
    expect(await db.prisma.userMessage.count()).toBe(rowsBefore);
  });

  it("gives concurrent sends distinct ids, each with its own rows and events", async () => {
    const ids = await Promise.all(
      Array.from({ length: 20 }, (_, n) =>
        doSendMessage(db, hamlet, {
          kind: n % 2 === 0 ? "channel" : "direct",
          ...(n % 2 === 0 ? { to: denmark, topic: "at once" } : { to: [cast.id("othello")] }),
          content: `message ${String(n)}`,
        } as Parameters<typeof doSendMessage>[2]),
      ),
    );
    expect(new Set(ids).size).toBe(ids.length);
    for (const [n, id] of ids.entries()) {
      const message = await db.prisma.message.findUniqueOrThrow({ where: { id } });
      expect(message.content).toBe(`message ${String(n)}`);
      const { rows, events } = await stored(id);
      if (n % 2 === 1) {
        expect(rows.map((r) => r.user_id).sort((a, b) => a - b)).toEqual(
          [hamlet.id, cast.id("othello")].sort((a, b) => a - b),
        );
        expect(message.dm_key).toBe(
          [hamlet.id, cast.id("othello")].sort((a, b) => a - b).join(","),
        );
      }
      expect(events.flatMap((e) => e.user_ids).sort((a, b) => a - b)).toEqual(
        rows.map((r) => r.user_id).sort((a, b) => a - b),
      );
    }
  });
});
