-- The organization's defaults of personal settings for new users (Zulip's
-- RealmUserDefault, feature level 96): the settings changed from Zulip's defaults.
ALTER TABLE "realms" ADD COLUMN "user_settings_defaults" JSONB NOT NULL DEFAULT '{}';
