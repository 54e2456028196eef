-- Presence changes are numbered realm-wide so that clients can ask for the
-- ones after the last they saw (POST /users/me/presence `last_update_id`).
CREATE SEQUENCE "presence_update_id_seq";

ALTER TABLE "presences" ADD COLUMN "last_update_id" INTEGER NOT NULL DEFAULT 0;

CREATE INDEX "presences_realm_id_last_update_id_idx" ON "presences"("realm_id", "last_update_id");
