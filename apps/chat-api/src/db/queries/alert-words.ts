import type { Tx } from "../kysely";

/** User `userId`'s alert words, in the order they were added. */
export async function alertWordList(tx: Tx, userId: number): Promise<string[]> {
  const rows = await tx.prisma.alertWord.findMany({
    where: { user_id: userId },
    orderBy: { id: "asc" },
    select: { word: true },
  });
  return rows.map((r) => r.word);
}

/** Adds alert words for user `userId` (one already there is skipped). */
export async function insertAlertWords(
  tx: Tx,
  userId: number,
  words: readonly string[],
): Promise<void> {
  await tx.prisma.alertWord.createMany({
    data: words.map((word) => ({ user_id: userId, word })),
    skipDuplicates: true,
  });
}

/** Removes user `userId`'s alert words equal to one of `words` in any case. */
export async function deleteAlertWords(
  tx: Tx,
  userId: number,
  words: readonly string[],
): Promise<void> {
  const gone = new Set(words.map((w) => w.toLowerCase()));
  const rows = await tx.prisma.alertWord.findMany({ where: { user_id: userId } });
  const ids = rows.filter((r) => gone.has(r.word.toLowerCase())).map((r) => r.id);
  await tx.prisma.alertWord.deleteMany({ where: { id: { in: ids } } });
}
