import { dueRound } from "../src/db/queries/due-rounds";
import { type TestDatabase, freshDatabase } from "./support/database";

/**
 * A round of what is due (reminders, scheduled messages) takes each owner's
 * earliest row only, the earliest first, so an owner with many due delays
 * nobody else's by more than a round.
 */
let db: TestDatabase;
let realmId: number;
let owners: number[];
let messageId: number;

beforeAll(async () => {
  db = await freshDatabase("seeded");
  const realm = await db.prisma.realm.findFirstOrThrow({ where: { subdomain: "" } });
  realmId = realm.id;
  owners = (
    await db.prisma.user.findMany({
      where: { realm_id: realmId, is_bot: false },
      select: { id: true },
      orderBy: { id: "asc" },
      take: 3,
    })
  ).map((u) => u.id);
  messageId = (await db.prisma.message.findFirstOrThrow({ select: { id: true } })).id;
});

afterAll(() => db.close());

const now = new Date("2026-11-29T12:00:00Z");
const minutesAgo = (m: number) => new Date(now.getTime() - m * 60_000);

/** The rows, each one owner's: [owner index, due minutes ago, delivered, failed]. */
const ROWS: [number, number, boolean, boolean][] = [
  [0, 30, false, false], // owner 0's earliest
  [0, 40, true, false], // delivered: not due
  [0, 20, false, false],
  [0, 10, false, false],
  [1, 25, false, false], // owner 1's only one due
  [1, -5, false, false], // in five minutes: not due
  [2, 50, false, true], // failed: not due
  [2, 5, false, false], // owner 2's earliest
];

describe.each(["reminders", "scheduled_messages"] as const)("a round of %s", (table) => {
  let ids: number[];

  beforeAll(async () => {
    ids = [];
    for (const [owner, ago, delivered, failed] of ROWS) {
      const common = {
        realm_id: realmId,
        scheduled_timestamp: minutesAgo(ago),
        delivered,
        failed,
      };
      const row =
        table === "reminders"
          ? await db.prisma.reminder.create({
              data: { ...common, user_id: owners[owner] ?? 0, message_id: messageId },
            })
          : await db.prisma.scheduledMessage.create({
              data: {
                ...common,
                sender_id: owners[owner] ?? 0,
                to_user_ids: [owners[(owner + 1) % 3] ?? 0],
                content: "later",
                rendered_content: "<p>later</p>",
              },
            });
      ids.push(row.id);
    }
  });

  it("takes each owner's earliest due row, the earliest first", async () => {
    expect(await dueRound(db, table, now, 10)).toEqual([ids[0], ids[4], ids[7]]);
  });

  it("serves at most `limit` owners", async () => {
    expect(await dueRound(db, table, now, 2)).toEqual([ids[0], ids[4]]);
  });

  it("moves on to an owner's next row once the earlier one is done", async () => {
    await db.q
      .updateTable(table)
      .set({ delivered: true })
      .where("id", "=", ids[0] ?? 0)
      .execute();
    expect(await dueRound(db, table, now, 10)).toEqual([ids[4], ids[2], ids[7]]);
  });
});
