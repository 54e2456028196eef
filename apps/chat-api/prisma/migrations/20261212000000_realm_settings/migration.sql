-- Organization settings PATCH /realm changes and the checks read: the
-- default language, message editing, and the time limits of editing,
-- deleting and moving messages (null: no limit).
ALTER TABLE "realms" ADD COLUMN "default_language" VARCHAR(20) NOT NULL DEFAULT 'en',
ADD COLUMN "allow_message_editing" BOOLEAN NOT NULL DEFAULT true,
ADD COLUMN "message_content_edit_limit_seconds" INTEGER DEFAULT 600,
ADD COLUMN "message_content_delete_limit_seconds" INTEGER,
ADD COLUMN "move_messages_within_stream_limit_seconds" INTEGER DEFAULT 604800,
ADD COLUMN "move_messages_between_streams_limit_seconds" INTEGER DEFAULT 604800;
