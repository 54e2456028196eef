import { randomFillSync, randomInt } from "node:crypto";

/**
 * `length` characters of `alphabet`, each drawn uniformly with the system's
 * cryptographic generator (`randomInt` rejects the draws that would favour
 * some characters): API keys and the keys of e-mailed links.
 */
export function randomKey(alphabet: string, length: number): string {
  let key = "";
  for (let i = 0; i < length; i++) key += alphabet[randomInt(alphabet.length)] ?? "";
  return key;
}

/** Random bytes for {@link randomUuid}, 16 per id, drawn 4 KiB at a time. */
const UUID_RANDOM = Buffer.alloc(16 * 256);
let uuidRandomAt = UUID_RANDOM.length;
/** Where {@link randomUuid} writes an id's 36 characters before reading them as one string. */
const UUID_TEXT = Buffer.alloc(36);
const HEX_DIGITS = Buffer.from("0123456789abcdef", "latin1");

/**
 * A random (version 4) UUID in its usual text form, as one flat string.
 * `crypto.randomUUID()` builds its text by concatenation, a tree of a dozen
 * strings (about 450 bytes) that whatever keeps the id keeps too, and
 * flattening it costs more than this (request ids: 0.5 µs against 5.7 µs of a
 * long-poll's CPU, docs/benchmarks.md). The bytes are the system's
 * cryptographic generator's, drawn in batches as Node does for its own.
 */
export function randomUuid(): string {
  if (uuidRandomAt === UUID_RANDOM.length) {
    randomFillSync(UUID_RANDOM);
    uuidRandomAt = 0;
  }
  let at = 0;
  for (let i = 0; i < 16; i++) {
    if (i === 4 || i === 6 || i === 8 || i === 10) UUID_TEXT[at++] = 0x2d; // "-"
    let byte = UUID_RANDOM[uuidRandomAt + i] ?? 0;
    // RFC 9562: version 4 in the high nibble of byte 6, the variant (binary 10) atop byte 8.
    if (i === 6) byte = (byte & 0x0f) | 0x40;
    else if (i === 8) byte = (byte & 0x3f) | 0x80;
    UUID_TEXT[at++] = HEX_DIGITS[byte >> 4] ?? 0;
    UUID_TEXT[at++] = HEX_DIGITS[byte & 0x0f] ?? 0;
  }
  uuidRandomAt += 16;
  return UUID_TEXT.toString("latin1");
}
