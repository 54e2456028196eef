-- The initial data model of chat-api, written by hand to match
-- prisma/schema.prisma (test/schema-agreement.test.ts checks that they agree).
-- Names follow Prisma Migrate's conventions, so `prisma migrate deploy` and
-- this project's runner can take turns on one database.

-- CreateEnum
CREATE TYPE "TopicsPolicy" AS ENUM ('inherit', 'allow_empty_topic', 'disable_empty_topic', 'empty_topic_only');

-- CreateEnum
CREATE TYPE "DraftType" AS ENUM ('unaddressed', 'stream', 'private');

-- CreateEnum
CREATE TYPE "PushTokenKind" AS ENUM ('fcm', 'apns');

-- CreateTable
CREATE TABLE "realms" (
    "id" SERIAL NOT NULL,
    "subdomain" VARCHAR(63) NOT NULL,
    "name" VARCHAR(40) NOT NULL,
    "description" TEXT NOT NULL DEFAULT '',
    "icon_url" TEXT,
    "deactivated" BOOLEAN NOT NULL DEFAULT false,
    "date_created" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "enable_spectator_access" BOOLEAN NOT NULL DEFAULT false,
    "email_auth_enabled" BOOLEAN NOT NULL DEFAULT true,
    "password_auth_enabled" BOOLEAN NOT NULL DEFAULT true,
    "message_retention_days" INTEGER,
    "new_stream_announcements_stream_id" INTEGER,
    "can_create_public_channel_group_id" INTEGER,
    "can_create_private_channel_group_id" INTEGER,
    "can_create_web_public_channel_group_id" INTEGER,
    "can_invite_users_group_id" INTEGER,
    "can_create_groups_id" INTEGER,
    "can_manage_all_groups_id" INTEGER,
    "can_add_subscribers_group_id" INTEGER,
    "can_access_all_users_group_id" INTEGER,
    "can_create_bots_group_id" INTEGER,

    CONSTRAINT "realms_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "users" (
    "id" SERIAL NOT NULL,
    "realm_id" INTEGER NOT NULL,
    "email" VARCHAR(254) NOT NULL,
    "delivery_email" VARCHAR(254) NOT NULL,
    "full_name" VARCHAR(100) NOT NULL,
    "role" INTEGER NOT NULL DEFAULT 400,
    "is_active" BOOLEAN NOT NULL DEFAULT true,
    "is_bot" BOOLEAN NOT NULL DEFAULT false,
    "bot_type" INTEGER,
    "bot_owner_id" INTEGER,
    "is_system_bot" BOOLEAN NOT NULL DEFAULT false,
    "api_key" VARCHAR(32) NOT NULL,
    "date_joined" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "timezone" TEXT NOT NULL DEFAULT '',
    "enable_drafts_synchronization" BOOLEAN NOT NULL DEFAULT true,

    CONSTRAINT "users_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "channel_folders" (
    "id" SERIAL NOT NULL,
    "realm_id" INTEGER NOT NULL,
    "name" VARCHAR(60) NOT NULL,
    "description" TEXT NOT NULL DEFAULT '',
    "order" INTEGER NOT NULL DEFAULT 0,
    "is_archived" BOOLEAN NOT NULL DEFAULT false,
    "creator_id" INTEGER,
    "date_created" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "channel_folders_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "channels" (
    "id" SERIAL NOT NULL,
    "realm_id" INTEGER NOT NULL,
    "name" VARCHAR(60) NOT NULL,
    "description" VARCHAR(1024) NOT NULL DEFAULT '',
    "rendered_description" TEXT NOT NULL DEFAULT '',
    "invite_only" BOOLEAN NOT NULL DEFAULT false,
    "is_web_public" BOOLEAN NOT NULL DEFAULT false,
    "history_public_to_subscribers" BOOLEAN NOT NULL DEFAULT true,
    "is_default_stream" BOOLEAN NOT NULL DEFAULT false,
    "message_retention_days" INTEGER,
    "topics_policy" "TopicsPolicy" NOT NULL DEFAULT 'inherit',
    "folder_id" INTEGER,
    "is_archived" BOOLEAN NOT NULL DEFAULT false,
    "creator_id" INTEGER,
    "date_created" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "can_add_subscribers_group_id" INTEGER NOT NULL,
    "can_administer_channel_group_id" INTEGER NOT NULL,
    "can_create_topic_group_id" INTEGER NOT NULL,
    "can_delete_any_message_group_id" INTEGER NOT NULL,
    "can_delete_own_message_group_id" INTEGER NOT NULL,
    "can_move_messages_out_of_channel_group_id" INTEGER NOT NULL,
    "can_move_messages_within_channel_group_id" INTEGER NOT NULL,
    "can_remove_subscribers_group_id" INTEGER NOT NULL,
    "can_resolve_topics_group_id" INTEGER NOT NULL,
    "can_send_message_group_id" INTEGER NOT NULL,
    "can_subscribe_group_id" INTEGER NOT NULL,

    CONSTRAINT "channels_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "subscriptions" (
    "id" SERIAL NOT NULL,
    "user_id" INTEGER NOT NULL,
    "channel_id" INTEGER NOT NULL,
    "active" BOOLEAN NOT NULL DEFAULT true,
    "is_muted" BOOLEAN NOT NULL DEFAULT false,
    "pin_to_top" BOOLEAN NOT NULL DEFAULT false,
    "color" VARCHAR(10) NOT NULL DEFAULT '#c2c2c2',
    "date_created" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "subscriptions_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "user_groups" (
    "id" SERIAL NOT NULL,
    "realm_id" INTEGER NOT NULL,
    "name" VARCHAR(100),
    "description" TEXT NOT NULL DEFAULT '',
    "is_system_group" BOOLEAN NOT NULL DEFAULT false,
    "deactivated" BOOLEAN NOT NULL DEFAULT false,
    "creator_id" INTEGER,
    "date_created" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "can_add_members_group_id" INTEGER,
    "can_join_group_id" INTEGER,
    "can_leave_group_id" INTEGER,
    "can_manage_group_id" INTEGER,
    "can_mention_group_id" INTEGER,
    "can_remove_members_group_id" INTEGER,

    CONSTRAINT "user_groups_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "user_group_members" (
    "group_id" INTEGER NOT NULL,
    "user_id" INTEGER NOT NULL,

    CONSTRAINT "user_group_members_pkey" PRIMARY KEY ("group_id","user_id")
);

-- CreateTable
CREATE TABLE "user_group_subgroups" (
    "supergroup_id" INTEGER NOT NULL,
    "subgroup_id" INTEGER NOT NULL,

    CONSTRAINT "user_group_subgroups_pkey" PRIMARY KEY ("supergroup_id","subgroup_id")
);

-- CreateTable
CREATE TABLE "user_topics" (
    "id" SERIAL NOT NULL,
    "user_id" INTEGER NOT NULL,
    "channel_id" INTEGER NOT NULL,
    "topic_name" VARCHAR(60) NOT NULL,
    "visibility_policy" INTEGER NOT NULL DEFAULT 1,
    "last_updated" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "user_topics_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "drafts" (
    "id" SERIAL NOT NULL,
    "user_id" INTEGER NOT NULL,
    "type" "DraftType" NOT NULL,
    "to" INTEGER[],
    "topic" VARCHAR(60) NOT NULL DEFAULT '',
    "content" TEXT NOT NULL,
    "last_edit_time" TIMESTAMPTZ(6) NOT NULL,

    CONSTRAINT "drafts_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "saved_snippets" (
    "id" SERIAL NOT NULL,
    "realm_id" INTEGER NOT NULL,
    "user_id" INTEGER NOT NULL,
    "title" VARCHAR(60) NOT NULL,
    "content" TEXT NOT NULL,
    "date_created" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "saved_snippets_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "messages" (
    "id" SERIAL NOT NULL,
    "realm_id" INTEGER NOT NULL,
    "sender_id" INTEGER NOT NULL,
    "channel_id" INTEGER,
    "topic" VARCHAR(60) NOT NULL DEFAULT '',
    "dm_key" TEXT,
    "content" TEXT NOT NULL,
    "rendered_content" TEXT NOT NULL,
    "date_sent" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "last_edit_time" TIMESTAMPTZ(6),

    CONSTRAINT "messages_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "user_messages" (
    "user_id" INTEGER NOT NULL,
    "message_id" INTEGER NOT NULL,
    "flags" BIGINT NOT NULL DEFAULT 0,

    CONSTRAINT "user_messages_pkey" PRIMARY KEY ("user_id","message_id")
);

-- CreateTable
CREATE TABLE "reminders" (
    "id" SERIAL NOT NULL,
    "realm_id" INTEGER NOT NULL,
    "user_id" INTEGER NOT NULL,
    "message_id" INTEGER NOT NULL,
    "note" TEXT,
    "scheduled_timestamp" TIMESTAMPTZ(6) NOT NULL,
    "delivered" BOOLEAN NOT NULL DEFAULT false,
    "failed" BOOLEAN NOT NULL DEFAULT false,
    "delivered_message_id" INTEGER,
    "date_created" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "reminders_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "invitations" (
    "id" SERIAL NOT NULL,
    "realm_id" INTEGER NOT NULL,
    "email" VARCHAR(254) NOT NULL,
    "referred_by_id" INTEGER NOT NULL,
    "invited_as" INTEGER NOT NULL DEFAULT 400,
    "notify_referrer_on_join" BOOLEAN NOT NULL DEFAULT true,
    "status" INTEGER NOT NULL DEFAULT 0,
    "confirmation_key" VARCHAR(40) NOT NULL,
    "expires_at" TIMESTAMPTZ(6),
    "date_created" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "invitations_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "invitation_channels" (
    "invitation_id" INTEGER NOT NULL,
    "channel_id" INTEGER NOT NULL,

    CONSTRAINT "invitation_channels_pkey" PRIMARY KEY ("invitation_id","channel_id")
);

-- CreateTable
CREATE TABLE "invitation_groups" (
    "invitation_id" INTEGER NOT NULL,
    "group_id" INTEGER NOT NULL,

    CONSTRAINT "invitation_groups_pkey" PRIMARY KEY ("invitation_id","group_id")
);

-- CreateTable
CREATE TABLE "reusable_invitations" (
    "id" SERIAL NOT NULL,
    "realm_id" INTEGER NOT NULL,
    "referred_by_id" INTEGER NOT NULL,
    "invited_as" INTEGER NOT NULL DEFAULT 400,
    "notify_referrer_on_join" BOOLEAN NOT NULL DEFAULT true,
    "status" INTEGER NOT NULL DEFAULT 0,
    "confirmation_key" VARCHAR(40) NOT NULL,
    "expires_at" TIMESTAMPTZ(6),
    "date_created" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "reusable_invitations_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "reusable_invitation_channels" (
    "invitation_id" INTEGER NOT NULL,
    "channel_id" INTEGER NOT NULL,

    CONSTRAINT "reusable_invitation_channels_pkey" PRIMARY KEY ("invitation_id","channel_id")
);

-- CreateTable
CREATE TABLE "reusable_invitation_groups" (
    "invitation_id" INTEGER NOT NULL,
    "group_id" INTEGER NOT NULL,

    CONSTRAINT "reusable_invitation_groups_pkey" PRIMARY KEY ("invitation_id","group_id")
);

-- CreateTable
CREATE TABLE "linkifiers" (
    "id" SERIAL NOT NULL,
    "realm_id" INTEGER NOT NULL,
    "pattern" TEXT NOT NULL,
    "url_template" TEXT NOT NULL,
    "order" INTEGER NOT NULL DEFAULT 0,

    CONSTRAINT "linkifiers_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "custom_profile_fields" (
    "id" SERIAL NOT NULL,
    "realm_id" INTEGER NOT NULL,
    "name" VARCHAR(40) NOT NULL,
    "hint" VARCHAR(80) NOT NULL DEFAULT '',
    "field_type" INTEGER NOT NULL DEFAULT 1,
    "field_data" TEXT NOT NULL DEFAULT '',
    "order" INTEGER NOT NULL DEFAULT 0,
    "display_in_profile_summary" BOOLEAN NOT NULL DEFAULT false,
    "required" BOOLEAN NOT NULL DEFAULT false,
    "editable_by_user" BOOLEAN NOT NULL DEFAULT true,

    CONSTRAINT "custom_profile_fields_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "custom_profile_field_values" (
    "id" SERIAL NOT NULL,
    "user_id" INTEGER NOT NULL,
    "field_id" INTEGER NOT NULL,
    "value" TEXT NOT NULL,
    "rendered_value" TEXT,

    CONSTRAINT "custom_profile_field_values_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "devices" (
    "id" SERIAL NOT NULL,
    "user_id" INTEGER NOT NULL,
    "date_created" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "devices_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "push_registrations" (
    "device_id" INTEGER NOT NULL,
    "push_key_id" BIGINT,
    "push_key" BYTEA,
    "token_kind" "PushTokenKind",
    "token_id" BYTEA,
    "bouncer_public_key" TEXT,
    "encrypted_push_registration" TEXT,
    "last_updated" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "push_registrations_pkey" PRIMARY KEY ("device_id")
);

-- CreateTable
CREATE TABLE "legacy_push_tokens" (
    "id" SERIAL NOT NULL,
    "user_id" INTEGER NOT NULL,
    "kind" "PushTokenKind" NOT NULL,
    "token" VARCHAR(4096) NOT NULL,
    "token_id" BYTEA NOT NULL,
    "ios_app_id" TEXT,
    "last_updated" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "legacy_push_tokens_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "presences" (
    "user_id" INTEGER NOT NULL,
    "realm_id" INTEGER NOT NULL,
    "last_connected_time" TIMESTAMPTZ(6) NOT NULL,
    "last_active_time" TIMESTAMPTZ(6),

    CONSTRAINT "presences_pkey" PRIMARY KEY ("user_id")
);

-- CreateTable
CREATE TABLE "event_queues" (
    "id" VARCHAR(64) NOT NULL,
    "user_id" INTEGER NOT NULL,
    "realm_id" INTEGER NOT NULL,
    "event_types" TEXT[],
    "all_event_types" BOOLEAN NOT NULL DEFAULT false,
    "options" JSONB NOT NULL DEFAULT '{}',
    "last_event_id" INTEGER NOT NULL DEFAULT -1,
    "date_created" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "last_poll_time" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "event_queues_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "events" (
    "queue_id" VARCHAR(64) NOT NULL,
    "id" INTEGER NOT NULL,
    "payload" JSONB NOT NULL,
    "date_created" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "events_pkey" PRIMARY KEY ("queue_id","id")
);

-- CreateTable
CREATE TABLE "outbox_emails" (
    "id" SERIAL NOT NULL,
    "realm_id" INTEGER,
    "to_address" VARCHAR(254) NOT NULL,
    "subject" TEXT NOT NULL,
    "body_text" TEXT NOT NULL,
    "body_html" TEXT,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "last_error" TEXT,
    "sent_at" TIMESTAMPTZ(6),
    "date_created" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "outbox_emails_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "realms_subdomain_key" ON "realms"("subdomain");

-- CreateIndex
CREATE UNIQUE INDEX "users_api_key_key" ON "users"("api_key");

-- CreateIndex
CREATE INDEX "users_realm_id_is_active_idx" ON "users"("realm_id", "is_active");

-- CreateIndex
CREATE INDEX "users_bot_owner_id_idx" ON "users"("bot_owner_id");

-- CreateIndex
CREATE INDEX "channel_folders_realm_id_order_idx" ON "channel_folders"("realm_id", "order");

-- CreateIndex
CREATE INDEX "channels_realm_id_is_archived_idx" ON "channels"("realm_id", "is_archived");

-- CreateIndex
CREATE INDEX "channels_folder_id_idx" ON "channels"("folder_id");

-- CreateIndex
CREATE INDEX "subscriptions_channel_id_active_idx" ON "subscriptions"("channel_id", "active");

-- CreateIndex
CREATE UNIQUE INDEX "subscriptions_user_id_channel_id_key" ON "subscriptions"("user_id", "channel_id");

-- CreateIndex
CREATE UNIQUE INDEX "user_groups_realm_id_name_key" ON "user_groups"("realm_id", "name");

-- CreateIndex
CREATE INDEX "user_group_members_user_id_idx" ON "user_group_members"("user_id");

-- CreateIndex
CREATE INDEX "user_group_subgroups_subgroup_id_idx" ON "user_group_subgroups"("subgroup_id");

-- CreateIndex
CREATE INDEX "user_topics_channel_id_idx" ON "user_topics"("channel_id");

-- CreateIndex
CREATE INDEX "drafts_user_id_last_edit_time_idx" ON "drafts"("user_id", "last_edit_time");

-- CreateIndex
CREATE INDEX "saved_snippets_user_id_idx" ON "saved_snippets"("user_id");

-- CreateIndex
CREATE INDEX "messages_channel_id_id_idx" ON "messages"("channel_id", "id");

-- CreateIndex
CREATE INDEX "messages_dm_key_id_idx" ON "messages"("dm_key", "id");

-- CreateIndex
CREATE INDEX "messages_realm_id_id_idx" ON "messages"("realm_id", "id");

-- CreateIndex
CREATE INDEX "user_messages_message_id_idx" ON "user_messages"("message_id");

-- CreateIndex
CREATE INDEX "reminders_user_id_idx" ON "reminders"("user_id");

-- CreateIndex
CREATE INDEX "reminders_delivered_scheduled_timestamp_idx" ON "reminders"("delivered", "scheduled_timestamp");

-- CreateIndex
CREATE UNIQUE INDEX "invitations_confirmation_key_key" ON "invitations"("confirmation_key");

-- CreateIndex
CREATE INDEX "invitations_realm_id_status_idx" ON "invitations"("realm_id", "status");

-- CreateIndex
CREATE INDEX "invitations_referred_by_id_idx" ON "invitations"("referred_by_id");

-- CreateIndex
CREATE INDEX "invitation_channels_channel_id_idx" ON "invitation_channels"("channel_id");

-- CreateIndex
CREATE INDEX "invitation_groups_group_id_idx" ON "invitation_groups"("group_id");

-- CreateIndex
CREATE UNIQUE INDEX "reusable_invitations_confirmation_key_key" ON "reusable_invitations"("confirmation_key");

-- CreateIndex
CREATE INDEX "reusable_invitations_realm_id_status_idx" ON "reusable_invitations"("realm_id", "status");

-- CreateIndex
CREATE INDEX "reusable_invitations_referred_by_id_idx" ON "reusable_invitations"("referred_by_id");

-- CreateIndex
CREATE INDEX "reusable_invitation_channels_channel_id_idx" ON "reusable_invitation_channels"("channel_id");

-- CreateIndex
CREATE INDEX "reusable_invitation_groups_group_id_idx" ON "reusable_invitation_groups"("group_id");

-- CreateIndex
CREATE INDEX "linkifiers_realm_id_order_idx" ON "linkifiers"("realm_id", "order");

-- CreateIndex
CREATE UNIQUE INDEX "linkifiers_realm_id_pattern_key" ON "linkifiers"("realm_id", "pattern");

-- CreateIndex
CREATE INDEX "custom_profile_fields_realm_id_order_idx" ON "custom_profile_fields"("realm_id", "order");

-- CreateIndex
CREATE UNIQUE INDEX "custom_profile_fields_realm_id_name_key" ON "custom_profile_fields"("realm_id", "name");

-- CreateIndex
CREATE INDEX "custom_profile_field_values_field_id_idx" ON "custom_profile_field_values"("field_id");

-- CreateIndex
CREATE UNIQUE INDEX "custom_profile_field_values_user_id_field_id_key" ON "custom_profile_field_values"("user_id", "field_id");

-- CreateIndex
CREATE INDEX "devices_user_id_idx" ON "devices"("user_id");

-- CreateIndex
CREATE INDEX "push_registrations_token_id_idx" ON "push_registrations"("token_id");

-- CreateIndex
CREATE INDEX "legacy_push_tokens_user_id_token_id_idx" ON "legacy_push_tokens"("user_id", "token_id");

-- CreateIndex
CREATE UNIQUE INDEX "legacy_push_tokens_user_id_kind_token_key" ON "legacy_push_tokens"("user_id", "kind", "token");

-- CreateIndex
CREATE INDEX "presences_realm_id_last_connected_time_idx" ON "presences"("realm_id", "last_connected_time");

-- CreateIndex
CREATE INDEX "event_queues_user_id_idx" ON "event_queues"("user_id");

-- CreateIndex
CREATE INDEX "event_queues_last_poll_time_idx" ON "event_queues"("last_poll_time");

-- CreateIndex
CREATE INDEX "outbox_emails_sent_at_date_created_idx" ON "outbox_emails"("sent_at", "date_created");

-- Constraints schema.prisma cannot express (listed in the agreement test).

-- One address per realm, case-insensitively (Zulip compares emails that way).
CREATE UNIQUE INDEX "users_realm_id_lower_email_key" ON "users"("realm_id", lower("email"));
CREATE UNIQUE INDEX "users_realm_id_lower_delivery_email_key" ON "users"("realm_id", lower("delivery_email"));

-- One channel name per realm, case-insensitively; likewise folders.
CREATE UNIQUE INDEX "channels_realm_id_lower_name_key" ON "channels"("realm_id", lower("name"));
CREATE UNIQUE INDEX "channel_folders_realm_id_lower_name_key" ON "channel_folders"("realm_id", lower("name"));

-- One visibility policy per user and topic; topics compare case-insensitively.
CREATE UNIQUE INDEX "user_topics_user_id_channel_id_lower_topic_name_key" ON "user_topics"("user_id", "channel_id", lower("topic_name"));

-- Topic narrows: messages of one topic of a channel, in id order.
CREATE INDEX "messages_channel_id_lower_topic_id_idx" ON "messages"("channel_id", lower("topic"), "id");

-- A user's unread messages, newest first (unread counts, mark_all_as_read batches).
CREATE INDEX "user_messages_unread_idx" ON "user_messages"("user_id", "message_id") WHERE ("flags" & 1) = 0;

-- AddForeignKey
ALTER TABLE "realms" ADD CONSTRAINT "realms_new_stream_announcements_stream_id_fkey" FOREIGN KEY ("new_stream_announcements_stream_id") REFERENCES "channels"("id") ON DELETE SET NULL ON UPDATE CASCADE;

ALTER TABLE "realms" ADD CONSTRAINT "realms_can_create_public_channel_group_id_fkey" FOREIGN KEY ("can_create_public_channel_group_id") REFERENCES "user_groups"("id") ON DELETE SET NULL ON UPDATE CASCADE;

ALTER TABLE "realms" ADD CONSTRAINT "realms_can_create_private_channel_group_id_fkey" FOREIGN KEY ("can_create_private_channel_group_id") REFERENCES "user_groups"("id") ON DELETE SET NULL ON UPDATE CASCADE;

ALTER TABLE "realms" ADD CONSTRAINT "realms_can_create_web_public_channel_group_id_fkey" FOREIGN KEY ("can_create_web_public_channel_group_id") REFERENCES "user_groups"("id") ON DELETE SET NULL ON UPDATE CASCADE;

ALTER TABLE "realms" ADD CONSTRAINT "realms_can_invite_users_group_id_fkey" FOREIGN KEY ("can_invite_users_group_id") REFERENCES "user_groups"("id") ON DELETE SET NULL ON UPDATE CASCADE;

ALTER TABLE "realms" ADD CONSTRAINT "realms_can_create_groups_id_fkey" FOREIGN KEY ("can_create_groups_id") REFERENCES "user_groups"("id") ON DELETE SET NULL ON UPDATE CASCADE;

ALTER TABLE "realms" ADD CONSTRAINT "realms_can_manage_all_groups_id_fkey" FOREIGN KEY ("can_manage_all_groups_id") REFERENCES "user_groups"("id") ON DELETE SET NULL ON UPDATE CASCADE;

ALTER TABLE "realms" ADD CONSTRAINT "realms_can_add_subscribers_group_id_fkey" FOREIGN KEY ("can_add_subscribers_group_id") REFERENCES "user_groups"("id") ON DELETE SET NULL ON UPDATE CASCADE;

ALTER TABLE "realms" ADD CONSTRAINT "realms_can_access_all_users_group_id_fkey" FOREIGN KEY ("can_access_all_users_group_id") REFERENCES "user_groups"("id") ON DELETE SET NULL ON UPDATE CASCADE;

ALTER TABLE "realms" ADD CONSTRAINT "realms_can_create_bots_group_id_fkey" FOREIGN KEY ("can_create_bots_group_id") REFERENCES "user_groups"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "users" ADD CONSTRAINT "users_realm_id_fkey" FOREIGN KEY ("realm_id") REFERENCES "realms"("id") ON DELETE CASCADE ON UPDATE CASCADE;

ALTER TABLE "users" ADD CONSTRAINT "users_bot_owner_id_fkey" FOREIGN KEY ("bot_owner_id") REFERENCES "users"("id") ON DELETE SET NULL ON UPDATE CASCADE;

ALTER TABLE "channel_folders" ADD CONSTRAINT "channel_folders_realm_id_fkey" FOREIGN KEY ("realm_id") REFERENCES "realms"("id") ON DELETE CASCADE ON UPDATE CASCADE;

ALTER TABLE "channel_folders" ADD CONSTRAINT "channel_folders_creator_id_fkey" FOREIGN KEY ("creator_id") REFERENCES "users"("id") ON DELETE SET NULL ON UPDATE CASCADE;

ALTER TABLE "channels" ADD CONSTRAINT "channels_realm_id_fkey" FOREIGN KEY ("realm_id") REFERENCES "realms"("id") ON DELETE CASCADE ON UPDATE CASCADE;

ALTER TABLE "channels" ADD CONSTRAINT "channels_folder_id_fkey" FOREIGN KEY ("folder_id") REFERENCES "channel_folders"("id") ON DELETE SET NULL ON UPDATE CASCADE;

ALTER TABLE "channels" ADD CONSTRAINT "channels_creator_id_fkey" FOREIGN KEY ("creator_id") REFERENCES "users"("id") ON DELETE SET NULL ON UPDATE CASCADE;

ALTER TABLE "channels" ADD CONSTRAINT "channels_can_add_subscribers_group_id_fkey" FOREIGN KEY ("can_add_subscribers_group_id") REFERENCES "user_groups"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

ALTER TABLE "channels" ADD CONSTRAINT "channels_can_administer_channel_group_id_fkey" FOREIGN KEY ("can_administer_channel_group_id") REFERENCES "user_groups"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

ALTER TABLE "channels" ADD CONSTRAINT "channels_can_create_topic_group_id_fkey" FOREIGN KEY ("can_create_topic_group_id") REFERENCES "user_groups"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

ALTER TABLE "channels" ADD CONSTRAINT "channels_can_delete_any_message_group_id_fkey" FOREIGN KEY ("can_delete_any_message_group_id") REFERENCES "user_groups"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

ALTER TABLE "channels" ADD CONSTRAINT "channels_can_delete_own_message_group_id_fkey" FOREIGN KEY ("can_delete_own_message_group_id") REFERENCES "user_groups"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

ALTER TABLE "channels" ADD CONSTRAINT "channels_can_move_messages_out_of_channel_group_id_fkey" FOREIGN KEY ("can_move_messages_out_of_channel_group_id") REFERENCES "user_groups"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

ALTER TABLE "channels" ADD CONSTRAINT "channels_can_move_messages_within_channel_group_id_fkey" FOREIGN KEY ("can_move_messages_within_channel_group_id") REFERENCES "user_groups"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

ALTER TABLE "channels" ADD CONSTRAINT "channels_can_remove_subscribers_group_id_fkey" FOREIGN KEY ("can_remove_subscribers_group_id") REFERENCES "user_groups"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

ALTER TABLE "channels" ADD CONSTRAINT "channels_can_resolve_topics_group_id_fkey" FOREIGN KEY ("can_resolve_topics_group_id") REFERENCES "user_groups"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

ALTER TABLE "channels" ADD CONSTRAINT "channels_can_send_message_group_id_fkey" FOREIGN KEY ("can_send_message_group_id") REFERENCES "user_groups"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

ALTER TABLE "channels" ADD CONSTRAINT "channels_can_subscribe_group_id_fkey" FOREIGN KEY ("can_subscribe_group_id") REFERENCES "user_groups"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

ALTER TABLE "subscriptions" ADD CONSTRAINT "subscriptions_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;

ALTER TABLE "subscriptions" ADD CONSTRAINT "subscriptions_channel_id_fkey" FOREIGN KEY ("channel_id") REFERENCES "channels"("id") ON DELETE CASCADE ON UPDATE CASCADE;

ALTER TABLE "user_groups" ADD CONSTRAINT "user_groups_realm_id_fkey" FOREIGN KEY ("realm_id") REFERENCES "realms"("id") ON DELETE CASCADE ON UPDATE CASCADE;

ALTER TABLE "user_groups" ADD CONSTRAINT "user_groups_creator_id_fkey" FOREIGN KEY ("creator_id") REFERENCES "users"("id") ON DELETE SET NULL ON UPDATE CASCADE;

ALTER TABLE "user_groups" ADD CONSTRAINT "user_groups_can_add_members_group_id_fkey" FOREIGN KEY ("can_add_members_group_id") REFERENCES "user_groups"("id") ON DELETE SET NULL ON UPDATE CASCADE;

ALTER TABLE "user_groups" ADD CONSTRAINT "user_groups_can_join_group_id_fkey" FOREIGN KEY ("can_join_group_id") REFERENCES "user_groups"("id") ON DELETE SET NULL ON UPDATE CASCADE;

ALTER TABLE "user_groups" ADD CONSTRAINT "user_groups_can_leave_group_id_fkey" FOREIGN KEY ("can_leave_group_id") REFERENCES "user_groups"("id") ON DELETE SET NULL ON UPDATE CASCADE;

ALTER TABLE "user_groups" ADD CONSTRAINT "user_groups_can_manage_group_id_fkey" FOREIGN KEY ("can_manage_group_id") REFERENCES "user_groups"("id") ON DELETE SET NULL ON UPDATE CASCADE;

ALTER TABLE "user_groups" ADD CONSTRAINT "user_groups_can_mention_group_id_fkey" FOREIGN KEY ("can_mention_group_id") REFERENCES "user_groups"("id") ON DELETE SET NULL ON UPDATE CASCADE;

ALTER TABLE "user_groups" ADD CONSTRAINT "user_groups_can_remove_members_group_id_fkey" FOREIGN KEY ("can_remove_members_group_id") REFERENCES "user_groups"("id") ON DELETE SET NULL ON UPDATE CASCADE;

ALTER TABLE "user_group_members" ADD CONSTRAINT "user_group_members_group_id_fkey" FOREIGN KEY ("group_id") REFERENCES "user_groups"("id") ON DELETE CASCADE ON UPDATE CASCADE;

ALTER TABLE "user_group_members" ADD CONSTRAINT "user_group_members_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;

ALTER TABLE "user_group_subgroups" ADD CONSTRAINT "user_group_subgroups_supergroup_id_fkey" FOREIGN KEY ("supergroup_id") REFERENCES "user_groups"("id") ON DELETE CASCADE ON UPDATE CASCADE;

ALTER TABLE "user_group_subgroups" ADD CONSTRAINT "user_group_subgroups_subgroup_id_fkey" FOREIGN KEY ("subgroup_id") REFERENCES "user_groups"("id") ON DELETE CASCADE ON UPDATE CASCADE;

ALTER TABLE "user_topics" ADD CONSTRAINT "user_topics_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;

ALTER TABLE "user_topics" ADD CONSTRAINT "user_topics_channel_id_fkey" FOREIGN KEY ("channel_id") REFERENCES "channels"("id") ON DELETE CASCADE ON UPDATE CASCADE;

ALTER TABLE "drafts" ADD CONSTRAINT "drafts_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;

ALTER TABLE "saved_snippets" ADD CONSTRAINT "saved_snippets_realm_id_fkey" FOREIGN KEY ("realm_id") REFERENCES "realms"("id") ON DELETE CASCADE ON UPDATE CASCADE;

ALTER TABLE "saved_snippets" ADD CONSTRAINT "saved_snippets_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;

ALTER TABLE "messages" ADD CONSTRAINT "messages_realm_id_fkey" FOREIGN KEY ("realm_id") REFERENCES "realms"("id") ON DELETE CASCADE ON UPDATE CASCADE;

ALTER TABLE "messages" ADD CONSTRAINT "messages_sender_id_fkey" FOREIGN KEY ("sender_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;

ALTER TABLE "messages" ADD CONSTRAINT "messages_channel_id_fkey" FOREIGN KEY ("channel_id") REFERENCES "channels"("id") ON DELETE CASCADE ON UPDATE CASCADE;

ALTER TABLE "user_messages" ADD CONSTRAINT "user_messages_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;

ALTER TABLE "user_messages" ADD CONSTRAINT "user_messages_message_id_fkey" FOREIGN KEY ("message_id") REFERENCES "messages"("id") ON DELETE CASCADE ON UPDATE CASCADE;

ALTER TABLE "reminders" ADD CONSTRAINT "reminders_realm_id_fkey" FOREIGN KEY ("realm_id") REFERENCES "realms"("id") ON DELETE CASCADE ON UPDATE CASCADE;

ALTER TABLE "reminders" ADD CONSTRAINT "reminders_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;

ALTER TABLE "reminders" ADD CONSTRAINT "reminders_message_id_fkey" FOREIGN KEY ("message_id") REFERENCES "messages"("id") ON DELETE CASCADE ON UPDATE CASCADE;

ALTER TABLE "invitations" ADD CONSTRAINT "invitations_realm_id_fkey" FOREIGN KEY ("realm_id") REFERENCES "realms"("id") ON DELETE CASCADE ON UPDATE CASCADE;

ALTER TABLE "invitations" ADD CONSTRAINT "invitations_referred_by_id_fkey" FOREIGN KEY ("referred_by_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;

ALTER TABLE "invitation_channels" ADD CONSTRAINT "invitation_channels_invitation_id_fkey" FOREIGN KEY ("invitation_id") REFERENCES "invitations"("id") ON DELETE CASCADE ON UPDATE CASCADE;

ALTER TABLE "invitation_channels" ADD CONSTRAINT "invitation_channels_channel_id_fkey" FOREIGN KEY ("channel_id") REFERENCES "channels"("id") ON DELETE CASCADE ON UPDATE CASCADE;

ALTER TABLE "invitation_groups" ADD CONSTRAINT "invitation_groups_invitation_id_fkey" FOREIGN KEY ("invitation_id") REFERENCES "invitations"("id") ON DELETE CASCADE ON UPDATE CASCADE;

ALTER TABLE "invitation_groups" ADD CONSTRAINT "invitation_groups_group_id_fkey" FOREIGN KEY ("group_id") REFERENCES "user_groups"("id") ON DELETE CASCADE ON UPDATE CASCADE;

ALTER TABLE "reusable_invitations" ADD CONSTRAINT "reusable_invitations_realm_id_fkey" FOREIGN KEY ("realm_id") REFERENCES "realms"("id") ON DELETE CASCADE ON UPDATE CASCADE;

ALTER TABLE "reusable_invitations" ADD CONSTRAINT "reusable_invitations_referred_by_id_fkey" FOREIGN KEY ("referred_by_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;

ALTER TABLE "reusable_invitation_channels" ADD CONSTRAINT "reusable_invitation_channels_invitation_id_fkey" FOREIGN KEY ("invitation_id") REFERENCES "reusable_invitations"("id") ON DELETE CASCADE ON UPDATE CASCADE;

ALTER TABLE "reusable_invitation_channels" ADD CONSTRAINT "reusable_invitation_channels_channel_id_fkey" FOREIGN KEY ("channel_id") REFERENCES "channels"("id") ON DELETE CASCADE ON UPDATE CASCADE;

ALTER TABLE "reusable_invitation_groups" ADD CONSTRAINT "reusable_invitation_groups_invitation_id_fkey" FOREIGN KEY ("invitation_id") REFERENCES "reusable_invitations"("id") ON DELETE CASCADE ON UPDATE CASCADE;

ALTER TABLE "reusable_invitation_groups" ADD CONSTRAINT "reusable_invitation_groups_group_id_fkey" FOREIGN KEY ("group_id") REFERENCES "user_groups"("id") ON DELETE CASCADE ON UPDATE CASCADE;

ALTER TABLE "linkifiers" ADD CONSTRAINT "linkifiers_realm_id_fkey" FOREIGN KEY ("realm_id") REFERENCES "realms"("id") ON DELETE CASCADE ON UPDATE CASCADE;

ALTER TABLE "custom_profile_fields" ADD CONSTRAINT "custom_profile_fields_realm_id_fkey" FOREIGN KEY ("realm_id") REFERENCES "realms"("id") ON DELETE CASCADE ON UPDATE CASCADE;

ALTER TABLE "custom_profile_field_values" ADD CONSTRAINT "custom_profile_field_values_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;

ALTER TABLE "custom_profile_field_values" ADD CONSTRAINT "custom_profile_field_values_field_id_fkey" FOREIGN KEY ("field_id") REFERENCES "custom_profile_fields"("id") ON DELETE CASCADE ON UPDATE CASCADE;

ALTER TABLE "devices" ADD CONSTRAINT "devices_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;

ALTER TABLE "push_registrations" ADD CONSTRAINT "push_registrations_device_id_fkey" FOREIGN KEY ("device_id") REFERENCES "devices"("id") ON DELETE CASCADE ON UPDATE CASCADE;

ALTER TABLE "legacy_push_tokens" ADD CONSTRAINT "legacy_push_tokens_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;

ALTER TABLE "presences" ADD CONSTRAINT "presences_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;

ALTER TABLE "presences" ADD CONSTRAINT "presences_realm_id_fkey" FOREIGN KEY ("realm_id") REFERENCES "realms"("id") ON DELETE CASCADE ON UPDATE CASCADE;

ALTER TABLE "event_queues" ADD CONSTRAINT "event_queues_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;

ALTER TABLE "event_queues" ADD CONSTRAINT "event_queues_realm_id_fkey" FOREIGN KEY ("realm_id") REFERENCES "realms"("id") ON DELETE CASCADE ON UPDATE CASCADE;

ALTER TABLE "events" ADD CONSTRAINT "events_queue_id_fkey" FOREIGN KEY ("queue_id") REFERENCES "event_queues"("id") ON DELETE CASCADE ON UPDATE CASCADE;

ALTER TABLE "outbox_emails" ADD CONSTRAINT "outbox_emails_realm_id_fkey" FOREIGN KEY ("realm_id") REFERENCES "realms"("id") ON DELETE SET NULL ON UPDATE CASCADE;
