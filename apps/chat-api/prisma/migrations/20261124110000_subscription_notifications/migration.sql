-- A subscription's own notification settings (POST
-- /users/me/subscriptions/properties): NULL follows the user's defaults.
ALTER TABLE "subscriptions" ADD COLUMN "desktop_notifications" BOOLEAN;
ALTER TABLE "subscriptions" ADD COLUMN "audible_notifications" BOOLEAN;
ALTER TABLE "subscriptions" ADD COLUMN "push_notifications" BOOLEAN;
ALTER TABLE "subscriptions" ADD COLUMN "email_notifications" BOOLEAN;
ALTER TABLE "subscriptions" ADD COLUMN "wildcard_mentions_notify" BOOLEAN;
