-- A user's status (POST /users/me/status): a short text and an emoji, empty
-- when unset.
ALTER TABLE "users" ADD COLUMN "status_text" VARCHAR(60) NOT NULL DEFAULT '';
ALTER TABLE "users" ADD COLUMN "status_emoji_name" VARCHAR(100) NOT NULL DEFAULT '';
ALTER TABLE "users" ADD COLUMN "status_emoji_code" VARCHAR(100) NOT NULL DEFAULT '';
ALTER TABLE "users" ADD COLUMN "status_reaction_type" VARCHAR(30) NOT NULL DEFAULT 'unicode_emoji';

-- A user's alert words (GET/POST/DELETE /users/me/alert_words): one row per
-- word, words compared case-insensitively.
CREATE TABLE "alert_words" (
    "id" SERIAL NOT NULL,
    "user_id" INTEGER NOT NULL,
    "word" VARCHAR(100) NOT NULL,

    CONSTRAINT "alert_words_pkey" PRIMARY KEY ("id")
);

CREATE UNIQUE INDEX "alert_words_user_id_lower_word_key" ON "alert_words"("user_id", lower("word"));

ALTER TABLE "alert_words" ADD CONSTRAINT "alert_words_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;
