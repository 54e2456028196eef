-- Muted users (Zulip's MutedUser, feature level 48): who a user muted, and when.
CREATE TABLE "muted_users" (
    "id" SERIAL NOT NULL,
    "user_id" INTEGER NOT NULL,
    "muted_user_id" INTEGER NOT NULL,
    "date_muted" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "muted_users_pkey" PRIMARY KEY ("id")
);

CREATE UNIQUE INDEX "muted_users_user_id_muted_user_id_key" ON "muted_users"("user_id", "muted_user_id");

CREATE INDEX "muted_users_muted_user_id_idx" ON "muted_users"("muted_user_id");

ALTER TABLE "muted_users" ADD CONSTRAINT "muted_users_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;

ALTER TABLE "muted_users" ADD CONSTRAINT "muted_users_muted_user_id_fkey" FOREIGN KEY ("muted_user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;
