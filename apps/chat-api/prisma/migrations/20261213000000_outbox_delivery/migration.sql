-- The outbox is drained by a worker: retries back off, and a replica claims an
-- e-mail while it sends it.
ALTER TABLE "outbox_emails" ADD COLUMN "next_attempt_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP;
ALTER TABLE "outbox_emails" ADD COLUMN "claimed_until" TIMESTAMPTZ(6);
CREATE INDEX "outbox_emails_sent_at_next_attempt_at_idx" ON "outbox_emails"("sent_at", "next_attempt_at");
