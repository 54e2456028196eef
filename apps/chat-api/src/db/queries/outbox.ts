import { sql } from "kysely";
import type { Tx } from "../kysely";
import { checkHeaderValue, htmlOfText } from "../../lib/email";

/** An e-mail to send: its HTML part is made from the text when not given. */
export interface OutboxEmailRow {
  realm_id: number;
  to_address: string;
  subject: string;
  body_text: string;
  body_html?: string;
}

/** Puts an e-mail in the outbox (a line break in its subject or address is refused: header injection). */
export async function queueEmail(tx: Tx, row: OutboxEmailRow): Promise<void> {
  checkHeaderValue("recipient", row.to_address);
  checkHeaderValue("subject", row.subject);
  await tx.prisma.outboxEmail.create({
    data: { ...row, body_html: row.body_html ?? htmlOfText(row.body_text) },
  });
}

/** How many e-mails were queued to each of `addresses` since `since` (absent: none). */
export async function emailsQueuedSince(
  tx: Tx,
  addresses: readonly string[],
  since: Date,
): Promise<Map<string, number>> {
  if (addresses.length === 0) return new Map();
  const rows = await tx.q
    .selectFrom("outbox_emails")
    .select(["to_address", (eb) => eb.fn.countAll<string>().as("queued")])
    .where("to_address", "=", (eb) => eb.fn.any(eb.val([...addresses])))
    .where("date_created", ">=", since)
    .groupBy("to_address")
    .execute();
  return new Map(rows.map((row) => [row.to_address, Number(row.queued)]));
}

/** Puts e-mails in the outbox in one statement (each checked as {@link queueEmail} checks one). */
export async function queueEmails(tx: Tx, rows: readonly OutboxEmailRow[]): Promise<void> {
  if (rows.length === 0) return;
  for (const row of rows) {
    checkHeaderValue("recipient", row.to_address);
    checkHeaderValue("subject", row.subject);
  }
  await tx.prisma.outboxEmail.createMany({
    data: rows.map((row) => ({ ...row, body_html: row.body_html ?? htmlOfText(row.body_text) })),
  });
}

/** An e-mail a replica has claimed to send. */
export interface ClaimedEmail {
  id: number;
  to_address: string;
  subject: string;
  body_text: string;
  body_html: string | null;
  attempts: number;
}

/**
 * Claims up to `limit` unsent e-mails whose time has come, for `leaseSeconds`,
 * in one statement: rows another replica is claiming are skipped, and a
 * claimed e-mail is not taken again before its lease ends. Each claim counts
 * as an attempt; e-mails tried `maxAttempts` times are left alone.
 */
export async function claimDueEmails(
  tx: Tx,
  limit: number,
  leaseSeconds: number,
  maxAttempts: number,
): Promise<ClaimedEmail[]> {
  const result = await sql<ClaimedEmail>`
    UPDATE outbox_emails
       SET claimed_until = now() + make_interval(secs => ${leaseSeconds}),
           attempts = attempts + 1
     WHERE id IN (
       SELECT id FROM outbox_emails
        WHERE sent_at IS NULL AND next_attempt_at <= now() AND attempts < ${maxAttempts}
          AND (claimed_until IS NULL OR claimed_until < now())
        ORDER BY next_attempt_at, id
        LIMIT ${limit}
        FOR UPDATE SKIP LOCKED)
    RETURNING id, to_address, subject, body_text, body_html, attempts`.execute(tx.q);
  return result.rows;
}

/** Notes e-mail `id` as sent. */
export async function markEmailSent(tx: Tx, id: number): Promise<void> {
  await sql`UPDATE outbox_emails SET sent_at = now(), claimed_until = NULL, last_error = NULL
             WHERE id = ${id}`.execute(tx.q);
}

/** Notes a failed try of e-mail `id`: its error, and when it may be tried again. */
export async function markEmailFailed(
  tx: Tx,
  id: number,
  error: string,
  retryInSeconds: number,
): Promise<void> {
  await sql`UPDATE outbox_emails
               SET last_error = ${error.slice(0, 1000)}, claimed_until = NULL,
                   next_attempt_at = now() + make_interval(secs => ${retryInSeconds})
             WHERE id = ${id}`.execute(tx.q);
}

/** E-mails waiting to be sent (not given up on). */
export async function pendingEmailCount(tx: Tx, maxAttempts: number): Promise<number> {
  const result = await sql<{ count: number }>`
    SELECT count(*)::int AS count FROM outbox_emails
     WHERE sent_at IS NULL AND attempts < ${maxAttempts}`.execute(tx.q);
  return result.rows[0]?.count ?? 0;
}
