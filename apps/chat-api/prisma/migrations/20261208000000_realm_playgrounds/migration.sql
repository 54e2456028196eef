-- Code playgrounds (Zulip's RealmPlayground, feature level 49): where clients
-- open a code block of a language, by an RFC 6570 template with one `code`.
CREATE TABLE "realm_playgrounds" (
    "id" SERIAL NOT NULL,
    "realm_id" INTEGER NOT NULL,
    "name" VARCHAR(50) NOT NULL,
    "pygments_language" VARCHAR(40) NOT NULL,
    "url_template" TEXT NOT NULL,

    CONSTRAINT "realm_playgrounds_pkey" PRIMARY KEY ("id")
);

CREATE UNIQUE INDEX "realm_playgrounds_realm_id_pygments_language_name_key" ON "realm_playgrounds"("realm_id", "pygments_language", "name");

ALTER TABLE "realm_playgrounds" ADD CONSTRAINT "realm_playgrounds_realm_id_fkey" FOREIGN KEY ("realm_id") REFERENCES "realms"("id") ON DELETE CASCADE ON UPDATE CASCADE;
