import type { Tx } from "../db/kysely";
import { MAX_TOPIC_LENGTH } from "./channel-settings";
import { JsonableError, ResourceNotFoundError } from "@repo/envelope";
import { checkCap } from "./caps";
import { z } from "zod";
import type { Draft, DraftType } from "../gen/prisma/client";
import type { Database } from "../db/database";
import {
  deleteDraft,
  draftCheck,
  draftCount,
  draftsOf,
  insertDrafts,
  ownDraft,
  updateDraft,
} from "../db/queries/drafts";
import { firstInactiveOrUnknown } from "../db/queries/users";
import { syncsDrafts } from "../db/queries/user-settings";
import { sendEvent } from "../realtime/queue";
import type { AuthedUser } from "../caches/auth";
import { checkChannelVisible } from "./channels";

/** A Draft object as clients send it: exactly the keys of the spec's Draft object. */
export const draftSchema = z
  .object({
    type: z.enum(["", "stream", "private"]),
    to: z.array(z.int32()),
    topic: z.string().refine((t) => !t.includes("\u0000"), "Topic must not contain null bytes"),
    content: z.string().refine((c) => !c.includes("\u0000"), "Message must not contain null bytes"),
    timestamp: z.number().optional(),
  })
  .strict();

/** One or more drafts (POST /drafts). */
export const draftListSchema = z.array(draftSchema);

/** A parsed Draft object. */
export type DraftInput = z.output<typeof draftSchema>;

/** A draft on the wire. */
export function draftView(
  draft: Pick<Draft, "id" | "type" | "to" | "topic" | "content" | "last_edit_time">,
) {
  return {
    id: draft.id,
    type: draft.type === "unaddressed" ? "" : draft.type,
    to: draft.to,
    topic: draft.topic,
    content: draft.content,
    timestamp: Math.floor(draft.last_edit_time.getTime() / 1000),
  };
}

/** The user's draft-sync setting off: every draft operation refuses (checked first). */
export async function checkDraftSync(tx: Tx, userId: number) {
  if (!(await syncsDrafts(tx, userId)))
    throw new JsonableError("User has disabled synchronizing drafts.");
}

/**
 * The columns of a valid draft, with Zulip's rules and messages: content
 * trimmed and not empty; a channel draft names exactly one channel the user
 * can access and its topic is cut to 60 characters; a direct-message draft
 * names users of the realm; an unaddressed one keeps no recipients or topic;
 * the timestamp is not negative (now when absent).
 */
async function validDraft(tx: Tx, user: AuthedUser, draft: DraftInput) {
  const content = draft.content.trim();
  if (content === "") throw new JsonableError("Message must not be empty");
  if (draft.timestamp !== undefined && draft.timestamp < 0)
    throw new JsonableError("Timestamp must not be negative.");
  const lastEdit = draft.timestamp === undefined ? new Date() : new Date(draft.timestamp * 1000);
  if (Number.isNaN(lastEdit.getTime())) throw new JsonableError("Invalid timestamp");
  let type: DraftType = "unaddressed";
  let to: number[] = [];
  let topic = "";
  if (draft.type === "stream") {
    const [channelId] = draft.to;
    if (channelId === undefined || draft.to.length !== 1)
      throw new JsonableError("Must specify exactly 1 channel ID for channel messages");
    await checkChannelVisible(tx, user, channelId);
    type = "stream";
    to = [channelId];
    topic = Array.from(draft.topic).slice(0, MAX_TOPIC_LENGTH).join("");
  } else if (draft.type === "private") {
    to = [...new Set(draft.to)];
    const unknown = await firstInactiveOrUnknown(tx, user.realm_id, to);
    if (unknown !== undefined) throw new JsonableError(`Invalid user ID ${unknown}`);
    type = "private";
  }
  return { type, to, topic, content, last_edit_time: lastEdit };
}

/** Creates drafts (all or none) and sends `drafts`/`add`; returns their ids. */
export async function doCreateDrafts(
  db: Database,
  user: AuthedUser,
  drafts: readonly DraftInput[],
  cap: number,
): Promise<number[]> {
  await checkDraftSync(db, user.id);
  const rows: Awaited<ReturnType<typeof validDraft>>[] = [];
  for (const draft of drafts) rows.push(await validDraft(db, user, draft));
  return db.transaction(async (tx) => {
    checkCap(await draftCount(tx, user.id), rows.length, cap, "drafts");
    const created = await insertDrafts(tx, user.id, rows);
    await sendEvent(tx, [user.id], { type: "drafts", op: "add", drafts: created.map(draftView) });
    return created.map((d) => d.id);
  });
}

const draftMissing = () => new ResourceNotFoundError("Draft does not exist");

async function checkOwnDraft(tx: Tx, userId: number, draftId: number) {
  if ((await ownDraft(tx, userId, draftId)) === null) throw draftMissing();
}

/**
 * PATCH /drafts/{id}: sync setting, then the draft's existence, then its
 * content; sends `drafts`/`update`. Kysely's statements only (one for the
 * two checks, then a transaction of two): a frequent call, and Prisma's
 * per-query cost would be most of its time.
 */
export async function doEditDraft(
  db: Database,
  user: AuthedUser,
  draftId: number,
  /** The new draft, parsed when called: after the sync setting and the draft are checked. */
  draft: () => DraftInput,
): Promise<void> {
  const found = await draftCheck(db, user.id, draftId);
  if (found === undefined) throw new Error(`user ${user.id} is gone`);
  if (!found.sync) throw new JsonableError("User has disabled synchronizing drafts.");
  if (found.draft === null) throw draftMissing();
  const row = await validDraft(db, user, draft());
  await db.transaction(async (tx) => {
    const draft = await updateDraft(tx, user.id, draftId, row);
    // Deleted by another client since the check.
    if (draft === undefined) throw draftMissing();
    await sendEvent(tx, [user.id], { type: "drafts", op: "update", draft: draftView(draft) });
  });
}

/** DELETE /drafts/{id}; sends `drafts`/`remove`. */
export async function doDeleteDraft(
  db: Database,
  user: AuthedUser,
  draftId: number,
): Promise<void> {
  await checkDraftSync(db, user.id);
  await db.transaction(async (tx) => {
    await checkOwnDraft(tx, user.id, draftId);
    await deleteDraft(tx, draftId);
    await sendEvent(tx, [user.id], { type: "drafts", op: "remove", draft_id: draftId });
  });
}

/** The user's drafts, newest edit first (GET /drafts and POST /register). */
export async function listDrafts(tx: Tx, userId: number) {
  return (await draftsOf(tx, userId)).map(draftView);
}
