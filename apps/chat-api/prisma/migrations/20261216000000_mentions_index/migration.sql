-- The mentions among a range of messages, without reading every recipient's
-- row of a channel message (mentioned or wildcard-mentioned: bits 8 and 16),
-- for the missed-message e-mails.
CREATE INDEX "user_messages_mentions_idx" ON "user_messages" ("message_id") WHERE (flags & 24) <> 0;
