import { randomBytes } from "node:crypto";
import type { Database } from "../database";

/** The server's secrets, by what they sign: each made on first use. */
export const SECRET_NAMES = {
  unsubscribeLinks: "unsubscribe-links",
  temporaryFileUrls: "temporary_file_urls",
} as const;

/** The name of one of the server's secrets. */
export type SecretName = (typeof SECRET_NAMES)[keyof typeof SECRET_NAMES];

/** Each open database's secrets, by name, once read. */
const secrets = new WeakMap<Database, Map<string, Promise<Buffer>>>();

/**
 * The server's secret named `name` (32 random bytes): stored the first time
 * any replica asks for it (the first to store it wins), then always the
 * same, so each process reads it once and keeps it.
 */
export function serverSecret(db: Database, name: SecretName): Promise<Buffer> {
  let known = secrets.get(db);
  if (known === undefined) {
    known = new Map();
    secrets.set(db, known);
  }
  let secret = known.get(name);
  if (secret === undefined) {
    secret = storedSecret(db, name);
    // A failed read is tried again by the next caller.
    secret.catch(() => known.delete(name));
    known.set(name, secret);
  }
  return secret;
}

async function storedSecret(db: Database, name: SecretName): Promise<Buffer> {
  await db.prisma.serverSecret.createMany({
    data: [{ name, value: new Uint8Array(randomBytes(32)) }],
    skipDuplicates: true,
  });
  const row = await db.prisma.serverSecret.findUniqueOrThrow({ where: { name } });
  return Buffer.from(row.value);
}
