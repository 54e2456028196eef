import { type ExpressionBuilder, type ExpressionWrapper, type SqlBool, sql } from "kysely";
import type { DB } from "../../gen/kysely/tables";
import type { Tx } from "../kysely";

/** Who asks for a file: a user of a realm, a guest or not. */
export interface FileViewer {
  id: number;
  realmId: number;
  guest: boolean;
}

/**
 * Whether `viewer` may fetch the file `a` (Zulip's rule): they uploaded it,
 * they received a message that links to it, or (not being a guest) a message
 * in a public channel links to it.
 */
function mayView(
  eb: ExpressionBuilder<DB & { a: DB["attachments"] }, "a">,
  viewer: FileViewer,
): ExpressionWrapper<DB & { a: DB["attachments"] }, "a", SqlBool> {
  const received = eb.exists(
    eb
      .selectFrom("attachment_messages as am")
      .innerJoin("user_messages as um", "um.message_id", "am.message_id")
      .select("am.message_id")
      .whereRef("am.attachment_id", "=", "a.id")
      .where("um.user_id", "=", viewer.id),
  );
  const inPublicChannel = eb.exists(
    eb
      .selectFrom("attachment_messages as am")
      .innerJoin("messages as m", "m.id", "am.message_id")
      .innerJoin("channels as c", "c.id", "m.channel_id")
      .select("am.message_id")
      .whereRef("am.attachment_id", "=", "a.id")
      .where("c.invite_only", "=", false),
  );
  return eb.or([
    eb("a.owner_id", "=", viewer.id),
    received,
    ...(viewer.guest ? [] : [inPublicChannel]),
  ]);
}

/** The realm's files among `pathIds`, each with whether `viewer` may fetch it. */
export async function filesFor(tx: Tx, viewer: FileViewer, pathIds: readonly string[]) {
  if (pathIds.length === 0) return [];
  return tx.q
    .selectFrom("attachments as a")
    .select(["a.id", "a.path_id", "a.owner_id", "a.file_name", "a.content_type", "a.size"])
    .select((eb) => mayView(eb, viewer).as("visible"))
    .where("a.realm_id", "=", viewer.realmId)
    .where("a.path_id", "in", [...pathIds])
    .execute();
}

/** How many files `ownerId` and their bots keep, and their total size in bytes. */
export async function uploadsHeld(
  tx: Tx,
  ownerId: number,
): Promise<{ count: number; bytes: number }> {
  const row = await tx.q
    .selectFrom("attachments")
    .select([sql<string>`count(*)`.as("count"), sql<string>`coalesce(sum(size), 0)`.as("bytes")])
    .where("owner_id", "in", (eb) =>
      eb
        .selectFrom("users")
        .select("id")
        .where((u) => u.or([u("id", "=", ownerId), u("bot_owner_id", "=", ownerId)])),
    )
    .executeTakeFirstOrThrow();
  return { count: Number(row.count), bytes: Number(row.bytes) };
}

/**
 * Makes the links of message `messageId` to files exactly `attachmentIds`:
 * links it no longer has are dropped (an edit that removes a file's URL), new
 * ones added.
 */
export async function setMessageFiles(
  tx: Tx,
  messageId: number,
  attachmentIds: readonly number[],
): Promise<void> {
  await tx.q
    .deleteFrom("attachment_messages")
    .where("message_id", "=", messageId)
    .$if(attachmentIds.length > 0, (q) => q.where("attachment_id", "not in", [...attachmentIds]))
    .execute();
  if (attachmentIds.length === 0) return;
  await tx.q
    .insertInto("attachment_messages")
    .values(attachmentIds.map((attachment_id) => ({ attachment_id, message_id: messageId })))
    .onConflict((oc) => oc.doNothing())
    .execute();
}

/** A new upload's columns. */
export interface NewAttachment {
  realm_id: number;
  owner_id: number;
  path_id: string;
  file_name: string;
  content_type: string;
  size: number;
}

/** Records an upload. */
export async function insertAttachment(tx: Tx, row: NewAttachment): Promise<void> {
  await tx.prisma.attachment.create({ data: row });
}

/** The realm's upload at `pathId`: what serving it needs; undefined if none. */
export async function attachmentByPath(tx: Tx, realmId: number, pathId: string) {
  const file = await tx.prisma.attachment.findFirst({
    where: { path_id: pathId, realm_id: realmId },
    select: { path_id: true, content_type: true },
  });
  return file ?? undefined;
}

/** User `ownerId`'s uploads by id, each with the messages that link to it. */
export function attachmentsOf(tx: Tx, ownerId: number) {
  return tx.prisma.attachment.findMany({
    where: { owner_id: ownerId },
    orderBy: { id: "asc" },
    select: {
      id: true,
      file_name: true,
      path_id: true,
      size: true,
      created_at: true,
      messages: { select: { message: { select: { id: true, date_sent: true } } } },
    },
  });
}

/** Deletes user `ownerId`'s upload `id`; answers its path, or undefined if there was none. */
export async function deleteOwnAttachment(
  tx: Tx,
  ownerId: number,
  id: number,
): Promise<string | undefined> {
  const file = await tx.prisma.attachment.findFirst({
    where: { id, owner_id: ownerId },
    select: { id: true, path_id: true },
  });
  if (file === null) return undefined;
  await tx.prisma.attachment.delete({ where: { id: file.id } });
  return file.path_id;
}
