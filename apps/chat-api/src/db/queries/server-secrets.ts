import type { Tx } from "../kysely";

/**
 * The server's secret named `name`: stored with `fresh` the first time it is
 * asked for (the first replica to store it wins), then always the same.
 */
export async function serverSecret(tx: Tx, name: string, fresh: Uint8Array<ArrayBuffer>) {
  await tx.prisma.serverSecret.createMany({ data: [{ name, value: fresh }], skipDuplicates: true });
  const row = await tx.prisma.serverSecret.findUniqueOrThrow({ where: { name } });
  return Buffer.from(row.value);
}
