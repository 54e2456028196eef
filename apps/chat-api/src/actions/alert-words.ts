import { alertWordList, deleteAlertWords, insertAlertWords } from "../db/queries/alert-words";
import type { Tx } from "../db/kysely";
import type { Database } from "../db/database";
import { JsonableError } from "@repo/envelope";
import { sendEvent } from "../realtime/queue";
import type { AuthedUser } from "../caches/auth";
import { checkCap } from "./caps";
import { codePoints } from "../lib/text";
import { lockUser } from "../db/queries/users";

/** Longest alert word (Zulip's). */
export const MAX_ALERT_WORD_LENGTH = 100;

/** The user's alert words, in the order they were added. */
export async function listAlertWords(tx: Tx, userId: number): Promise<string[]> {
  return alertWordList(tx, userId);
}

/**
 * POST and DELETE /users/me/alert_words: adds words (trimmed, empty ones
 * dropped, each once whatever its case; up to `cap` in all) or removes them
 * (any case); answers the new list, sent to the user's clients as an
 * `alert_words` event in the same transaction.
 */
export async function doChangeAlertWords(
  db: Database,
  user: AuthedUser,
  words: readonly string[],
  op: "add" | "remove",
  cap: number,
): Promise<string[]> {
  const cleaned = [...new Set(words.map((w) => w.trim()).filter((w) => w !== ""))];
  if (cleaned.some((w) => codePoints(w) > MAX_ALERT_WORD_LENGTH))
    throw new JsonableError(`alert_words is too long (limit: ${MAX_ALERT_WORD_LENGTH} characters)`);
  return db.transaction(async (tx) => {
    // One change at a time per user: the cap and the duplicate check hold.
    await lockUser(tx, user.id);
    const current = await listAlertWords(tx, user.id);
    const known = new Set(current.map((w) => w.toLowerCase()));
    if (op === "add") {
      // The first spelling of each new word, in the order given.
      const fresh: string[] = [];
      for (const word of cleaned) {
        if (known.has(word.toLowerCase())) continue;
        known.add(word.toLowerCase());
        fresh.push(word);
      }
      checkCap(current.length, fresh.length, cap, "alert words");
      await insertAlertWords(tx, user.id, fresh);
    } else {
      await deleteAlertWords(tx, user.id, cleaned);
    }
    const list = await listAlertWords(tx, user.id);
    await sendEvent(tx, [user.id], { type: "alert_words", alert_words: list });
    return list;
  });
}
