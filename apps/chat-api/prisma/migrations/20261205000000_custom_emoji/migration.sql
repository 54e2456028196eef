-- Custom emoji (Zulip's RealmEmoji): one live emoji per name in a realm; a
-- deleted one is deactivated, its image kept for the messages that show it.
CREATE TABLE "custom_emoji" (
    "id" SERIAL NOT NULL,
    "realm_id" INTEGER NOT NULL,
    "name" VARCHAR(60) NOT NULL,
    "author_id" INTEGER,
    "path_id" TEXT NOT NULL,
    "content_type" VARCHAR(32) NOT NULL,
    "deactivated" BOOLEAN NOT NULL DEFAULT false,
    "date_created" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "custom_emoji_pkey" PRIMARY KEY ("id")
);

CREATE UNIQUE INDEX "custom_emoji_path_id_key" ON "custom_emoji"("path_id");

CREATE INDEX "custom_emoji_realm_id_name_idx" ON "custom_emoji"("realm_id", "name");

CREATE INDEX "custom_emoji_author_id_idx" ON "custom_emoji"("author_id");

CREATE UNIQUE INDEX "custom_emoji_realm_id_name_live_key" ON "custom_emoji"("realm_id", "name") WHERE NOT "deactivated";

ALTER TABLE "custom_emoji" ADD CONSTRAINT "custom_emoji_realm_id_fkey" FOREIGN KEY ("realm_id") REFERENCES "realms"("id") ON DELETE CASCADE ON UPDATE CASCADE;

ALTER TABLE "custom_emoji" ADD CONSTRAINT "custom_emoji_author_id_fkey" FOREIGN KEY ("author_id") REFERENCES "users"("id") ON DELETE SET NULL ON UPDATE CASCADE;
