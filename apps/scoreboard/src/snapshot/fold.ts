/**
 * The case-insensitive key of a username: NFKC, then Unicode lower-casing.
 * `toLowerCase` is locale-independent (unlike `toLocaleLowerCase`), so a server
 * with a Turkish locale folds "I" the same as any other.
 */
export function foldUsername(username: string): string {
  return username.normalize("NFKC").toLowerCase();
}
