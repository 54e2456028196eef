import { deleteExpiredMessages } from "../src/actions/retention";
import { type TestServer, channelIds, loadCast, startTestServer } from "./support/server";

/**
 * Message retention: the sweep each replica runs once a minute deletes the
 * channel messages older than their channel's `message_retention_days`
 * (or the realm's), and nothing else.
 */
let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});

afterAll(() => server.close());

it("deletes channel messages past their channel's retention, with their copies, and keeps the rest", async () => {
  const cast = await loadCast(server, ["hamlet", "othello"]);
  const channels = await channelIds(server);
  const send = async (channel: string, topic: string) =>
    (
      await server.call("POST", "/api/v1/messages", {
        ...cast.as("hamlet"),
        form: { type: "stream", to: String(channels[channel]), topic, content: "old" },
      })
    ).body.id as number;
  const direct = (
    await server.call("POST", "/api/v1/messages", {
      ...cast.as("hamlet"),
      form: { type: "direct", to: JSON.stringify([cast.id("othello")]), content: "old" },
    })
  ).body.id as number;
  const [expired, recent, unlimited, realmDefault] = [
    await send("Scotland", "retention"),
    await send("Scotland", "retention"),
    await send("Verona", "retention"),
    await send("Denmark", "retention"),
  ];
  const { prisma } = server.db;
  await prisma.channel.update({
    where: { id: channels.Scotland },
    data: { message_retention_days: 30 },
  });
  await prisma.channel.update({
    where: { id: channels.Verona },
    data: { message_retention_days: -1 },
  });
  const daysAgo = (days: number) => new Date(Date.now() - days * 86_400_000);
  await prisma.message.updateMany({
    where: { id: { in: [expired, unlimited, realmDefault, direct] } },
    data: { date_sent: daysAgo(31) },
  });
  await prisma.message.update({ where: { id: recent }, data: { date_sent: daysAgo(29) } });

  // The demo realm's own old messages count too.
  const older = (where: object) =>
    prisma.message.count({ where: { ...where, date_sent: { lt: daysAgo(30) } } });
  const inScotland = await older({ channel_id: channels.Scotland });
  expect(await deleteExpiredMessages(server.db, new Date())).toBe(inScotland);
  expect(await older({ channel_id: channels.Scotland })).toBe(0);
  const left = await prisma.message.findMany({
    where: { id: { in: [expired, recent, unlimited, realmDefault, direct] } },
    select: { id: true },
    orderBy: { id: "asc" },
  });
  expect(left.map((m) => m.id)).toEqual(
    [direct, recent, unlimited, realmDefault].sort((a, b) => a - b),
  );
  expect(await prisma.userMessage.count({ where: { message_id: expired } })).toBe(0);

  // The realm's retention applies to channels that follow it.
  const realm = await prisma.realm.findFirstOrThrow({ where: { subdomain: "" } });
  await prisma.realm.update({ where: { id: realm.id }, data: { message_retention_days: 30 } });
  const following = await older({
    channel: { realm_id: realm.id, message_retention_days: null },
  });
  expect(following).toBeGreaterThan(0);
  expect(await deleteExpiredMessages(server.db, new Date())).toBe(Math.min(following, 1000));
  expect(await prisma.message.count({ where: { id: realmDefault } })).toBe(0);
  expect(await prisma.message.count({ where: { id: { in: [unlimited, direct, recent] } } })).toBe(
    3,
  );
  expect(await deleteExpiredMessages(server.db, new Date())).toBe(0);
});
