import type { Tx } from "../kysely";

/** When user `reporterId`'s reports since `since` were made, oldest first, at most `limit`. */
export async function reportTimesSince(
  tx: Tx,
  reporterId: number,
  since: Date,
  limit: number,
): Promise<Date[]> {
  const rows = await tx.prisma.messageReport.findMany({
    where: { reporter_id: reporterId, date_created: { gt: since } },
    orderBy: { date_created: "asc" },
    select: { date_created: true },
    take: limit,
  });
  return rows.map((r) => r.date_created);
}

/** A new report's columns. */
export interface NewMessageReport {
  realm_id: number;
  reporter_id: number;
  message_id: number;
  report_type: string;
}

/** Records a report of a message. */
export async function insertMessageReport(tx: Tx, row: NewMessageReport): Promise<void> {
  await tx.prisma.messageReport.create({ data: row });
}
