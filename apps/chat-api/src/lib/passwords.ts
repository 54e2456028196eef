import { randomBytes, scrypt, timingSafeEqual } from "node:crypto";
import { RateLimitedError } from "@repo/envelope";
import { concurrencyLimit } from "./concurrency";

/**
 * scrypt's cost (N = 2^15, r = 8, p = 1: OWASP's recommended minimum), run on
 * libuv's thread pool by the asynchronous `scrypt`, so a login never holds the
 * event loop. A stored hash carries its own parameters: raising them later
 * leaves old hashes readable.
 */
const COST = { N: 2 ** 15, r: 8, p: 1 };
const KEY_BYTES = 32;
const SALT_BYTES = 16;

/** Longer passwords are refused before hashing (each byte is hashed). */
export const MAX_PASSWORD_LENGTH = 1000;

/**
 * At most this many hashes at once: half of libuv's thread pool (4 threads
 * unless UV_THREADPOOL_SIZE says otherwise), so that file reads and DNS
 * lookups always find a free thread however many logins arrive.
 */
export const HASHING_SLOTS = Math.floor(Number(process.env.UV_THREADPOOL_SIZE ?? 4) / 2) || 1;

/** Most logins waiting for a slot; past them a login is answered 429 at once. */
export const HASHING_QUEUE = 200;

/** Runs a hash in one of the {@link HASHING_SLOTS}, after the logins before it. */
const inHashingSlot = concurrencyLimit(HASHING_SLOTS, HASHING_QUEUE, () => new RateLimitedError(1));

function derive(
  password: string,
  salt: Buffer,
  cost: { N: number; r: number; p: number },
): Promise<Buffer> {
  return inHashingSlot(() => scryptKey(password, salt, cost));
}

function scryptKey(
  password: string,
  salt: Buffer,
  cost: { N: number; r: number; p: number },
): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    // 128 * N * r bytes of memory, twice over for room.
    const maxmem = 256 * cost.N * cost.r;
    scrypt(password.normalize("NFC"), salt, KEY_BYTES, { ...cost, maxmem }, (error, key) => {
      if (error === null) resolve(key);
      else reject(error);
    });
  });
}

/** The stored form of `password`: `scrypt$N$r$p$salt$hash`, salt and hash in base64. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const key = await derive(password, salt, COST);
  return ["scrypt", COST.N, COST.r, COST.p, salt.toString("base64"), key.toString("base64")].join(
    "$",
  );
}

/** A hash no password matches, checked when there is no account, so both cases take as long. */
const NO_ACCOUNT = `scrypt$${String(COST.N)}$${String(COST.r)}$${String(COST.p)}$${Buffer.alloc(SALT_BYTES).toString("base64")}$`;

/**
 * Whether `password` matches `stored` (a {@link hashPassword} result), compared
 * in constant time. A missing or unreadable hash matches nothing, after the
 * same work as a real comparison.
 */
export async function checkPassword(password: string, stored: string | null): Promise<boolean> {
  const parts = (stored ?? NO_ACCOUNT).split("$");
  const [scheme, n, r, p, salt, hash] = parts;
  const cost = { N: Number(n), r: Number(r), p: Number(p) };
  const readable =
    parts.length === 6 &&
    scheme === "scrypt" &&
    Number.isInteger(Math.log2(cost.N)) &&
    cost.N <= 2 ** 20 &&
    cost.r >= 1 &&
    cost.r <= 32 &&
    cost.p >= 1 &&
    cost.p <= 4;
  const key = await derive(password, Buffer.from(salt ?? "", "base64"), readable ? cost : COST);
  const expected = Buffer.from(hash ?? "", "base64");
  return readable && expected.length === key.length && timingSafeEqual(expected, key);
}
