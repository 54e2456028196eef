-- Data exports of a realm (Zulip's RealmExport, POST /export/realm): a tar.gz
-- archive in the upload store, public (1) or standard (2).
CREATE TABLE "realm_exports" (
    "id" SERIAL NOT NULL,
    "realm_id" INTEGER NOT NULL,
    "acting_user_id" INTEGER NOT NULL,
    "export_type" INTEGER NOT NULL DEFAULT 1,
    "date_requested" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "date_finished" TIMESTAMPTZ(6),
    "date_failed" TIMESTAMPTZ(6),
    "path_id" VARCHAR(300),

    CONSTRAINT "realm_exports_pkey" PRIMARY KEY ("id")
);

CREATE INDEX "realm_exports_realm_id_date_requested_idx" ON "realm_exports"("realm_id", "date_requested");

ALTER TABLE "realm_exports" ADD CONSTRAINT "realm_exports_realm_id_fkey" FOREIGN KEY ("realm_id") REFERENCES "realms"("id") ON DELETE CASCADE ON UPDATE CASCADE;

ALTER TABLE "realm_exports" ADD CONSTRAINT "realm_exports_acting_user_id_fkey" FOREIGN KEY ("acting_user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;
