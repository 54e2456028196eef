import { randomInt } from "node:crypto";

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
