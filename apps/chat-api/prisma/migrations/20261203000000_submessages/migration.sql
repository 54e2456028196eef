-- Widgets (Zulip's submessages): a /poll or /todo message's widget, then the
-- changes people make to it, in order.
CREATE TABLE "submessages" (
    "id" SERIAL NOT NULL,
    "message_id" INTEGER NOT NULL,
    "sender_id" INTEGER NOT NULL,
    "msg_type" VARCHAR(32) NOT NULL,
    "content" TEXT NOT NULL,

    CONSTRAINT "submessages_pkey" PRIMARY KEY ("id")
);

CREATE INDEX "submessages_message_id_id_idx" ON "submessages"("message_id", "id");

ALTER TABLE "submessages" ADD CONSTRAINT "submessages_message_id_fkey" FOREIGN KEY ("message_id") REFERENCES "messages"("id") ON DELETE CASCADE ON UPDATE CASCADE;

ALTER TABLE "submessages" ADD CONSTRAINT "submessages_sender_id_fkey" FOREIGN KEY ("sender_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;
