import {
  deleteSavedSnippet,
  insertSavedSnippet,
  ownSavedSnippet,
  savedSnippetCount,
  savedSnippetsOf,
  updateSavedSnippet,
} from "../db/queries/saved-snippets";
import type { Tx } from "../db/kysely";
import type { Database } from "../db/database";
import { JsonableError, ResourceNotFoundError } from "@repo/envelope";
import { checkCap } from "./caps";
import type { SavedSnippet } from "../gen/prisma/client";
import { sendEvent } from "../realtime/queue";
import type { AuthedUser } from "../caches/auth";
import { codePoints } from "../lib/text";

/** Limits of a saved snippet (the contract's). */
export const MAX_SNIPPET_TITLE_LENGTH = 60;
export const MAX_SNIPPET_CONTENT_LENGTH = 10_000;

/** A saved snippet on the wire. */
export function savedSnippetView(snippet: SavedSnippet) {
  return {
    id: snippet.id,
    title: snippet.title,
    content: snippet.content,
    date_created: Math.floor(snippet.date_created.getTime() / 1000),
  };
}

function checkField(name: "title" | "content", value: string, limit: number): void {
  if (value.trim() === "") throw new JsonableError(`${name} cannot be blank`);
  if (codePoints(value) > limit)
    throw new JsonableError(`${name} is too long (limit: ${limit} characters)`);
}

/** The user's snippets, oldest first (GET /saved_snippets and POST /register). */
export async function listSavedSnippets(tx: Tx, userId: number) {
  return (await savedSnippetsOf(tx, userId)).map(savedSnippetView);
}

/** Creates a snippet and sends `saved_snippets`/`add`; returns its id. */
export async function doCreateSavedSnippet(
  db: Database,
  user: AuthedUser,
  title: string,
  content: string,
  cap: number,
): Promise<number> {
  checkField("title", title, MAX_SNIPPET_TITLE_LENGTH);
  checkField("content", content, MAX_SNIPPET_CONTENT_LENGTH);
  return db.transaction(async (tx) => {
    const held = await savedSnippetCount(tx, user.id);
    checkCap(held, 1, cap, "saved snippets");
    const snippet = await insertSavedSnippet(tx, {
      realm_id: user.realm_id,
      user_id: user.id,
      title,
      content,
    });
    await sendEvent(tx, [user.id], {
      type: "saved_snippets",
      op: "add",
      saved_snippet: savedSnippetView(snippet),
    });
    return snippet.id;
  });
}

async function ownSnippet(tx: Tx, userId: number, id: number) {
  const snippet = await ownSavedSnippet(tx, userId, id);
  if (snippet === null) throw new ResourceNotFoundError("Saved snippet does not exist.");
  return snippet;
}

/**
 * PATCH /saved_snippets/{id}: the caller's snippet (else 404); neither field
 * is a success that changes nothing; sends `saved_snippets`/`update`.
 */
export async function doEditSavedSnippet(
  db: Database,
  user: AuthedUser,
  id: number,
  changes: { title: string | undefined; content: string | undefined },
): Promise<void> {
  await db.transaction(async (tx) => {
    await ownSnippet(tx, user.id, id);
    if (changes.title === undefined && changes.content === undefined) return;
    if (changes.title !== undefined) checkField("title", changes.title, MAX_SNIPPET_TITLE_LENGTH);
    if (changes.content !== undefined)
      checkField("content", changes.content, MAX_SNIPPET_CONTENT_LENGTH);
    const snippet = await updateSavedSnippet(tx, id, {
      ...(changes.title === undefined ? {} : { title: changes.title }),
      ...(changes.content === undefined ? {} : { content: changes.content }),
    });
    await sendEvent(tx, [user.id], {
      type: "saved_snippets",
      op: "update",
      saved_snippet: savedSnippetView(snippet),
    });
  });
}

/** DELETE /saved_snippets/{id}; sends `saved_snippets`/`remove`. */
export async function doDeleteSavedSnippet(
  db: Database,
  user: AuthedUser,
  id: number,
): Promise<void> {
  await db.transaction(async (tx) => {
    await ownSnippet(tx, user.id, id);
    await deleteSavedSnippet(tx, id);
    await sendEvent(tx, [user.id], { type: "saved_snippets", op: "remove", saved_snippet_id: id });
  });
}
