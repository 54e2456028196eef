import {
  type Cast,
  type TestServer,
  apiError,
  createOtherRealm,
  listenAs,
  loadCast,
  startTestServer,
} from "./support/server";
import { registerSchema } from "./support/zulip-schema";

/**
 * Muted users (Zulip 4.0, feature level 48): POST and DELETE
 * /users/me/muted_users/{id}, register's `muted_users`, the `muted_users`
 * event, and what muting does to messages: the muted user's unread messages
 * become read, and later ones arrive read.
 */
let server: TestServer;
let cast: Cast;
let other: Awaited<ReturnType<typeof createOtherRealm>>;

beforeAll(async () => {
  server = await startTestServer();
  cast = await loadCast(server, ["hamlet", "othello", "cordelia", "iago"]);
  other = await createOtherRealm(server);
});

afterAll(() => server.close());

const as = (who: string) => cast.as(who);
const id = (who: string) => cast.id(who);
const mute = (who: string, target: number) =>
  server.call("POST", `/api/v1/users/me/muted_users/${String(target)}`, as(who));
const unmute = (who: string, target: number) =>
  server.call("DELETE", `/api/v1/users/me/muted_users/${String(target)}`, as(who));

async function directMessage(from: string, to: string, content: string): Promise<number> {
  const reply = await server.call("POST", "/api/v1/messages", {
    ...as(from),
    form: { type: "direct", to: JSON.stringify([id(to)]), content },
  });
  expect(reply.status).toBe(200);
  return reply.body.id as number;
}

const isRead = async (userId: number, messageId: number) =>
  ((
    await server.db.prisma.userMessage.findUniqueOrThrow({
      where: { user_id_message_id: { user_id: userId, message_id: messageId } },
    })
  ).flags &
    1n) ===
  1n;

const registeredMutes = async (who: string) => {
  const reply = await server.call("POST", "/api/v1/register", {
    ...as(who),
    form: { fetch_event_types: JSON.stringify(["muted_users"]) },
  });
  expect(reply.status).toBe(200);
  expect(registerSchema(["muted_users"])(reply.body)).toEqual([]);
  return reply.body.muted_users as { id: number; timestamp: number }[];
};

it("mutes a user: their unread messages become read, the list and its event change", async () => {
  const before = await directMessage("othello", "hamlet", "before the mute");
  const fromOthers = await directMessage("cordelia", "hamlet", "not muted");
  const listen = await listenAs(server, as("hamlet"), ["muted_users", "update_message_flags"]);
  const started = Math.floor(Date.now() / 1000);
  const reply = await mute("hamlet", id("othello"));
  expect([reply.status, reply.body]).toEqual([200, { result: "success", msg: "" }]);
  const events = await listen();
  expect(events).toContainEqual({
    type: "update_message_flags",
    op: "add",
    operation: "add",
    flag: "read",
    all: false,
    messages: [before],
  });
  const listed = events.find((e) => e.type === "muted_users");
  const muted = listed?.muted_users as { id: number; timestamp: number }[];
  expect(muted.map((m) => m.id)).toEqual([id("othello")]);
  expect(muted[0]?.timestamp).toBeGreaterThanOrEqual(started - 1);
  expect(muted[0]?.timestamp).toBeLessThanOrEqual(Math.floor(Date.now() / 1000));
  expect(await isRead(id("hamlet"), before)).toBe(true);
  expect(await isRead(id("hamlet"), fromOthers)).toBe(false);
  expect(await registeredMutes("hamlet")).toEqual(listed?.muted_users);
  // Only the muter's list changed.
  expect(await registeredMutes("othello")).toEqual([]);
});

it("delivers a muted user's later messages read to the muter, unread to others", async () => {
  const after = await server.call("POST", "/api/v1/messages", {
    ...as("othello"),
    form: {
      type: "direct",
      to: JSON.stringify([id("hamlet"), id("cordelia")]),
      content: "after the mute",
    },
  });
  expect(after.status).toBe(200);
  const messageId = after.body.id as number;
  expect(await isRead(id("hamlet"), messageId)).toBe(true);
  expect(await isRead(id("cordelia"), messageId)).toBe(false);
});

it("answers Zulip's errors, changing nothing", async () => {
  expect((await mute("hamlet", id("hamlet"))).body).toEqual(apiError("Cannot mute self"));
  expect((await mute("hamlet", id("othello"))).body).toEqual(apiError("User already muted"));
  expect((await mute("hamlet", 2_000_000_000)).body).toEqual(apiError("No such user"));
  expect((await mute("hamlet", other.outsider.id)).body).toEqual(apiError("No such user"));
  expect((await unmute("hamlet", id("cordelia"))).body).toEqual(apiError("User is not muted"));
  expect((await unmute("hamlet", 2_000_000_000)).body).toEqual(apiError("No such user"));
  expect(await server.db.prisma.mutedUser.count({ where: { user_id: id("hamlet") } })).toBe(1);
});

it("unmutes: the event lists no one, and messages arrive unread again", async () => {
  const listen = await listenAs(server, as("hamlet"), ["muted_users"]);
  const reply = await unmute("hamlet", id("othello"));
  expect(reply.status).toBe(200);
  expect(await listen()).toEqual([{ type: "muted_users", muted_users: [] }]);
  expect(await registeredMutes("hamlet")).toEqual([]);
  const later = await directMessage("othello", "hamlet", "after the unmute");
  expect(await isRead(id("hamlet"), later)).toBe(false);
});

it("mutes bots and deactivated users, as Zulip does", async () => {
  const bot = await server.db.prisma.user.findFirstOrThrow({
    where: { is_bot: true, is_system_bot: false, realm: { subdomain: "" } },
  });
  expect((await mute("iago", bot.id)).status).toBe(200);
  await server.db.prisma.user.update({ where: { id: id("cordelia") }, data: { is_active: false } });
  try {
    expect((await mute("iago", id("cordelia"))).status).toBe(200);
  } finally {
    await server.db.prisma.user.update({
      where: { id: id("cordelia") },
      data: { is_active: true },
    });
  }
  expect((await registeredMutes("iago")).map((m) => m.id)).toEqual([bot.id, id("cordelia")]);
});
