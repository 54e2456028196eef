import type { Database } from "../src/db/database";
import { SYSTEM_GROUPS } from "../src/actions/realm-creation";
import { DEMO_PEOPLE, seedDemoRealm } from "../src/cli/demo-data";
import { Role } from "../src/lib/roles";
import { freshDatabase } from "./support/database";

let db: Database;

beforeAll(async () => {
  db = await freshDatabase();
  await seedDemoRealm(db);
});

afterAll(() => db.close());

const user = (key: string) =>
  db.prisma.user.findFirstOrThrow({ where: { email: `${key}@example.com` } });

describe("the demo realm", () => {
  it("is the root realm, named Demo, announcing in Verona", async () => {
    const realm = await db.prisma.realm.findUniqueOrThrow({
      where: { subdomain: "" },
      include: { new_stream_announcements_stream: true },
    });
    expect(realm.name).toBe("Demo");
    expect(realm.new_stream_announcements_stream?.name).toBe("Verona");
  });

  it("has the demo people with their roles and random 32-character keys", async () => {
    const people = await db.prisma.user.findMany({
      where: { is_bot: false },
      orderBy: { id: "asc" },
    });
    expect(people.map((p) => [p.email, p.role])).toEqual(
      DEMO_PEOPLE.map((p) => [`${p.key}@example.com`, p.role]),
    );
    expect(people.every((p) => /^[A-Za-z0-9]{32}$/.test(p.api_key))).toBe(true);
    expect(new Set(people.map((p) => p.api_key)).size).toBe(people.length);
  });

  it("has hamlet's generic bot and the notification bot as a system bot", async () => {
    const hamlet = await user("hamlet");
    const bot = await user("hamlet-bot");
    expect(bot).toMatchObject({
      is_bot: true,
      bot_type: 1,
      bot_owner_id: hamlet.id,
      is_system_bot: false,
    });
    expect(await user("notification-bot")).toMatchObject({
      is_bot: true,
      bot_owner_id: null,
      is_system_bot: true,
    });
  });

  it("subscribes every human to the public channels and three people to core team", async () => {
    const channels = await db.prisma.channel.findMany({
      include: { subscriptions: { include: { user: true } } },
      orderBy: { id: "asc" },
    });
    const summary = channels.map((c) => [
      c.name,
      c.invite_only,
      c.subscriptions.map((s) => s.user.email.split("@")[0]).sort(),
    ]);
    const humans = DEMO_PEOPLE.map((p) => p.key).sort();
    expect(summary).toEqual([
      ["Verona", false, humans],
      ["Denmark", false, humans],
      ["Scotland", false, humans],
      ["core team", true, ["desdemona", "hamlet", "iago"]],
    ]);
  });

  it("has the system groups nested by role, and hamletcharacters", async () => {
    const groups = await db.prisma.userGroup.findMany({
      include: { subgroups: { include: { subgroup: true } }, members: { include: { user: true } } },
    });
    const byName = new Map(groups.map((g) => [g.name, g]));
    SYSTEM_GROUPS.slice(1).forEach((name, i) => {
      expect(byName.get(name)?.subgroups.map((s) => s.subgroup.name)).toEqual([SYSTEM_GROUPS[i]]);
    });
    expect(byName.get("role:owners")?.members.map((m) => m.user.email)).toEqual([
      "desdemona@example.com",
    ]);
    expect(byName.get("role:nobody")?.is_system_group).toBe(true);
    const characters = byName.get("hamletcharacters");
    expect(characters?.is_system_group).toBe(false);
    expect(characters?.members.map((m) => m.user.email).sort()).toEqual([
      "cordelia@example.com",
      "hamlet@example.com",
    ]);
  });

  it("has two linkifiers and three profile fields, in order", async () => {
    expect(await db.prisma.linkifier.count()).toBe(2);
    const fields = await db.prisma.customProfileField.findMany({ orderBy: { order: "asc" } });
    expect(fields.map((f) => f.name)).toEqual(["Phone number", "Biography", "Favorite editor"]);
  });

  it("has 50 messages, all unread for othello and cordelia and read for everyone else", async () => {
    expect(await db.prisma.message.count()).toBe(50);
    const unread = await db.sql.query<{ email: string; unread: number }>(
      `SELECT u.email, count(*)::int AS unread FROM user_messages m JOIN users u ON u.id = m.user_id
       WHERE m.flags & 1 = 0 GROUP BY u.email ORDER BY u.email`,
    );
    expect(unread).toEqual([
      { email: "cordelia@example.com", unread: 50 },
      { email: "othello@example.com", unread: 50 },
    ]);
  });

  it("gives a second database other API keys", async () => {
    const other = await freshDatabase();
    try {
      await seedDemoRealm(other);
      const a = await user("hamlet");
      const b = await other.prisma.user.findFirstOrThrow({
        where: { email: "hamlet@example.com" },
      });
      expect(b.role).toBe(Role.MEMBER);
      expect(b.api_key).not.toBe(a.api_key);
    } finally {
      await other.close();
    }
  });
});
