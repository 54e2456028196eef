-- Emoji reactions to messages (POST/DELETE /messages/{id}/reactions): one row
-- per user, message and emoji; Zulip's `reaction_type` and `emoji_code` name the
-- emoji, `emoji_name` is the name it was given by.
CREATE TABLE "reactions" (
    "id" SERIAL NOT NULL,
    "message_id" INTEGER NOT NULL,
    "user_id" INTEGER NOT NULL,
    "emoji_name" VARCHAR(100) NOT NULL,
    "emoji_code" VARCHAR(100) NOT NULL,
    "reaction_type" VARCHAR(30) NOT NULL DEFAULT 'unicode_emoji',

    CONSTRAINT "reactions_pkey" PRIMARY KEY ("id")
);

CREATE INDEX "reactions_message_id_idx" ON "reactions"("message_id");

CREATE UNIQUE INDEX "reactions_user_id_message_id_reaction_type_emoji_code_key" ON "reactions"("user_id", "message_id", "reaction_type", "emoji_code");

ALTER TABLE "reactions" ADD CONSTRAINT "reactions_message_id_fkey" FOREIGN KEY ("message_id") REFERENCES "messages"("id") ON DELETE CASCADE ON UPDATE CASCADE;

ALTER TABLE "reactions" ADD CONSTRAINT "reactions_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;
