import type { Kysely, Selectable } from "kysely";
import type { DB, Draft } from "../../gen/kysely/tables";
import type { Tx } from "../kysely";

/** User `userId`'s draft sync setting, and `draftId` if it is theirs (else null); undefined if no such user. */
export function draftCheckQuery(q: Kysely<DB>, userId: number, draftId: number) {
  return q
    .selectFrom("users as u")
    .leftJoin("drafts as d", (join) =>
      join.on("d.id", "=", draftId).onRef("d.user_id", "=", "u.id"),
    )
    .select(["u.enable_drafts_synchronization as sync", "d.id as draft"])
    .where("u.id", "=", userId);
}

/** {@link draftCheckQuery}, run on `tx`. */
export function draftCheck(tx: Tx, userId: number, draftId: number) {
  return draftCheckQuery(tx.q, userId, draftId).executeTakeFirst();
}

/** A draft's new content, as stored. */
export type DraftChange = Pick<
  Selectable<Draft>,
  "type" | "to" | "topic" | "content" | "last_edit_time"
>;

/** Replaces user `userId`'s draft `draftId`; answers the row as stored, or undefined if the draft is gone. */
export function updateDraftQuery(
  q: Kysely<DB>,
  userId: number,
  draftId: number,
  change: DraftChange,
) {
  return q
    .updateTable("drafts")
    .set({
      type: change.type,
      to: change.to,
      topic: change.topic,
      content: change.content,
      last_edit_time: change.last_edit_time,
    })
    .where("id", "=", draftId)
    .where("user_id", "=", userId)
    .returning(["id", "type", "to", "topic", "content", "last_edit_time"]);
}

/** {@link updateDraftQuery}, run on `tx`. */
export function updateDraft(tx: Tx, userId: number, draftId: number, change: DraftChange) {
  return updateDraftQuery(tx.q, userId, draftId, change).executeTakeFirst();
}

/** How many drafts user `userId` keeps. */
export function draftCount(tx: Tx, userId: number): Promise<number> {
  return tx.prisma.draft.count({ where: { user_id: userId } });
}

/** Stores user `userId`'s new drafts; answers them as stored, in order. */
export async function insertDrafts(tx: Tx, userId: number, rows: readonly DraftChange[]) {
  const created = [];
  for (const row of rows)
    created.push(await tx.prisma.draft.create({ data: { ...row, user_id: userId } }));
  return created;
}

/** User `userId`'s draft `draftId`, or null. */
export function ownDraft(tx: Tx, userId: number, draftId: number) {
  return tx.prisma.draft.findFirst({ where: { id: draftId, user_id: userId } });
}

/** Deletes draft `draftId`. */
export async function deleteDraft(tx: Tx, draftId: number): Promise<void> {
  await tx.prisma.draft.delete({ where: { id: draftId } });
}

/** User `userId`'s drafts, newest edit first. */
export function draftsOf(tx: Tx, userId: number) {
  return tx.prisma.draft.findMany({
    where: { user_id: userId },
    orderBy: [{ last_edit_time: "desc" }, { id: "desc" }],
  });
}
