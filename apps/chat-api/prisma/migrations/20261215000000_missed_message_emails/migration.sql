-- How far the missed-message e-mails have looked: every message up to this id
-- was considered once (one row; a replica scans while it holds it locked).
-- It starts at the newest message: history before the upgrade is not e-mailed.
CREATE TABLE "missed_message_scans" (
    "id" SMALLINT NOT NULL,
    "last_message_id" INTEGER NOT NULL,

    CONSTRAINT "missed_message_scans_pkey" PRIMARY KEY ("id")
);
INSERT INTO "missed_message_scans" ("id", "last_message_id")
  SELECT 1, COALESCE(MAX("id"), 0) FROM "messages";
