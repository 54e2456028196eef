import type { Logger } from "pino";
import type { Database } from "../db/database";
import { claimDueEmails, markEmailFailed, markEmailSent } from "../db/queries/outbox";
import { type Mailer, htmlOfText } from "../lib/email";

/** Tries of one e-mail before it is given up on (left in the outbox with its last error). */
export const MAX_EMAIL_ATTEMPTS = 8;
/** E-mails one replica claims at a time. */
const EMAIL_BATCH = 20;
/** How long a claim lasts: longer than a send may take (nodemailer gives up within 50 s). */
const CLAIM_SECONDS = 300;
/** The longest pause between two tries. */
const MAX_RETRY_SECONDS = 3600;

/** What one round of {@link deliverOutbox} did. */
export interface DeliveryRound {
  sent: number;
  failed: number;
}

/**
 * Sends the outbox's due e-mails through `mailer`, until none is due: each is
 * claimed by one replica at a time (so sent once, unless a replica stops
 * between the mail server's acceptance and its note of it), a failure noted
 * with its error and retried after `retrySeconds`, doubled at each try (at
 * most an hour), at most {@link MAX_EMAIL_ATTEMPTS} times.
 */
export async function deliverOutbox(
  db: Database,
  mailer: Mailer,
  options: { retrySeconds: number; logger: Logger; counted?: (outcome: "sent" | "failed") => void },
): Promise<DeliveryRound> {
  const round: DeliveryRound = { sent: 0, failed: 0 };
  for (;;) {
    const claimed = await claimDueEmails(db, EMAIL_BATCH, CLAIM_SECONDS, MAX_EMAIL_ATTEMPTS);
    if (claimed.length === 0) return round;
    for (const email of claimed) {
      try {
        await mailer.send({
          to: email.to_address,
          subject: email.subject,
          text: email.body_text,
          html: email.body_html ?? htmlOfText(email.body_text),
        });
        await markEmailSent(db, email.id);
        round.sent++;
        options.counted?.("sent");
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        const retry = Math.min(options.retrySeconds * 2 ** (email.attempts - 1), MAX_RETRY_SECONDS);
        await markEmailFailed(db, email.id, message, retry);
        round.failed++;
        options.counted?.("failed");
        options.logger.warn(
          { emailId: email.id, attempts: email.attempts, retryInSeconds: retry, err: error },
          email.attempts >= MAX_EMAIL_ATTEMPTS
            ? "gave up sending an e-mail"
            : "could not send an e-mail",
        );
      }
    }
  }
}
