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
