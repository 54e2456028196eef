-- A user's settings changed by PATCH /settings (those without a column of
-- their own): a JSON object of setting -> value; absent settings are Zulip's
-- defaults.
ALTER TABLE "users" ADD COLUMN "settings" JSONB NOT NULL DEFAULT '{}';
