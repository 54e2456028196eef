-- Message reports (feature level 382): the realm's moderation request channel,
-- and each report, to bound how many one person makes.
ALTER TABLE "realms" ADD COLUMN "moderation_request_channel_id" INTEGER;

ALTER TABLE "realms" ADD CONSTRAINT "realms_moderation_request_channel_id_fkey" FOREIGN KEY ("moderation_request_channel_id") REFERENCES "channels"("id") ON DELETE SET NULL ON UPDATE CASCADE;

CREATE TABLE "message_reports" (
    "id" SERIAL NOT NULL,
    "realm_id" INTEGER NOT NULL,
    "reporter_id" INTEGER NOT NULL,
    "message_id" INTEGER NOT NULL,
    "report_type" VARCHAR(16) NOT NULL,
    "date_created" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "message_reports_pkey" PRIMARY KEY ("id")
);

CREATE INDEX "message_reports_reporter_id_date_created_idx" ON "message_reports"("reporter_id", "date_created");

CREATE INDEX "message_reports_message_id_idx" ON "message_reports"("message_id");

CREATE INDEX "message_reports_realm_id_idx" ON "message_reports"("realm_id");

ALTER TABLE "message_reports" ADD CONSTRAINT "message_reports_realm_id_fkey" FOREIGN KEY ("realm_id") REFERENCES "realms"("id") ON DELETE CASCADE ON UPDATE CASCADE;

ALTER TABLE "message_reports" ADD CONSTRAINT "message_reports_reporter_id_fkey" FOREIGN KEY ("reporter_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;

ALTER TABLE "message_reports" ADD CONSTRAINT "message_reports_message_id_fkey" FOREIGN KEY ("message_id") REFERENCES "messages"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Message objects' `edit_history`: the newest 20 edits, newest first, without
-- the content they replaced (that stays in `edit_history`, for GET /messages/{id}/history).
ALTER TABLE "messages" ADD COLUMN "edit_summary" JSONB;

UPDATE "messages" SET "edit_summary" = (
    SELECT jsonb_agg(e.entry - 'prev_content' - 'prev_rendered_content' ORDER BY e.position DESC)
    FROM jsonb_array_elements("edit_history") WITH ORDINALITY AS e(entry, position)
    WHERE e.position > jsonb_array_length("edit_history") - 20
)
WHERE "edit_history" IS NOT NULL;
