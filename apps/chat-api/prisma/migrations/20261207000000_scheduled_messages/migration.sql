-- Scheduled messages (Zulip's ScheduledMessage, feature level 179): a message its
-- sender scheduled to be sent later, sent by the server at its time exactly once.
CREATE TABLE "scheduled_messages" (
    "id" SERIAL NOT NULL,
    "realm_id" INTEGER NOT NULL,
    "sender_id" INTEGER NOT NULL,
    "channel_id" INTEGER,
    "topic" TEXT NOT NULL DEFAULT '',
    "to_user_ids" INTEGER[],
    "content" TEXT NOT NULL,
    "rendered_content" TEXT NOT NULL,
    "scheduled_timestamp" TIMESTAMPTZ(6) NOT NULL,
    "read_by_sender" BOOLEAN,
    "delivered" BOOLEAN NOT NULL DEFAULT false,
    "failed" BOOLEAN NOT NULL DEFAULT false,
    "failure_message" TEXT,
    "delivered_message_id" INTEGER,
    "date_created" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "scheduled_messages_pkey" PRIMARY KEY ("id")
);

CREATE INDEX "scheduled_messages_sender_id_idx" ON "scheduled_messages"("sender_id");

CREATE INDEX "scheduled_messages_delivered_scheduled_timestamp_idx" ON "scheduled_messages"("delivered", "scheduled_timestamp");

ALTER TABLE "scheduled_messages" ADD CONSTRAINT "scheduled_messages_realm_id_fkey" FOREIGN KEY ("realm_id") REFERENCES "realms"("id") ON DELETE CASCADE ON UPDATE CASCADE;

ALTER TABLE "scheduled_messages" ADD CONSTRAINT "scheduled_messages_sender_id_fkey" FOREIGN KEY ("sender_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;

ALTER TABLE "scheduled_messages" ADD CONSTRAINT "scheduled_messages_channel_id_fkey" FOREIGN KEY ("channel_id") REFERENCES "channels"("id") ON DELETE CASCADE ON UPDATE CASCADE;
