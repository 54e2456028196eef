-- Links e-mailed to confirm an address before sign-up, or to set a password:
-- single use, expiring, stored as the SHA-256 of their key (a copy of the
-- database does not hold a working link).
CREATE TABLE "account_confirmations" (
    "id" SERIAL NOT NULL,
    "realm_id" INTEGER NOT NULL,
    "kind" SMALLINT NOT NULL,
    "email" VARCHAR(254) NOT NULL,
    "user_id" INTEGER,
    "reusable_invitation_id" INTEGER,
    "key_hash" CHAR(64) NOT NULL,
    "expires_at" TIMESTAMPTZ(6) NOT NULL,
    "used_at" TIMESTAMPTZ(6),
    "date_created" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "account_confirmations_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "account_confirmations_key_hash_key" ON "account_confirmations"("key_hash");
CREATE INDEX "account_confirmations_realm_id_email_date_created_idx" ON "account_confirmations"("realm_id", "email", "date_created");
CREATE INDEX "account_confirmations_user_id_idx" ON "account_confirmations"("user_id");
CREATE INDEX "account_confirmations_reusable_invitation_id_idx" ON "account_confirmations"("reusable_invitation_id");
ALTER TABLE "account_confirmations" ADD CONSTRAINT "account_confirmations_realm_id_fkey" FOREIGN KEY ("realm_id") REFERENCES "realms"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "account_confirmations" ADD CONSTRAINT "account_confirmations_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "account_confirmations" ADD CONSTRAINT "account_confirmations_reusable_invitation_id_fkey" FOREIGN KEY ("reusable_invitation_id") REFERENCES "reusable_invitations"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Who may sign up without an invitation (Zulip's realm settings of the same names).
ALTER TABLE "realms" ADD COLUMN "invite_required" BOOLEAN NOT NULL DEFAULT true;
ALTER TABLE "realms" ADD COLUMN "emails_restricted_to_domains" BOOLEAN NOT NULL DEFAULT false;
ALTER TABLE "realms" ADD COLUMN "disallow_disposable_email_addresses" BOOLEAN NOT NULL DEFAULT true;

-- The domains whose addresses may sign up when `emails_restricted_to_domains` is on.
CREATE TABLE "realm_domains" (
    "id" SERIAL NOT NULL,
    "realm_id" INTEGER NOT NULL,
    "domain" VARCHAR(80) NOT NULL,
    "allow_subdomains" BOOLEAN NOT NULL DEFAULT false,

    CONSTRAINT "realm_domains_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "realm_domains_realm_id_domain_key" ON "realm_domains"("realm_id", "domain");
ALTER TABLE "realm_domains" ADD CONSTRAINT "realm_domains_realm_id_fkey" FOREIGN KEY ("realm_id") REFERENCES "realms"("id") ON DELETE CASCADE ON UPDATE CASCADE;
