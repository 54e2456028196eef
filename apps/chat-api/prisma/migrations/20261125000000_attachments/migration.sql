-- Uploaded files (POST /user_uploads): one row per file, owned by its uploader;
-- `path_id` is where it is stored and its URL (`/user_uploads/{path_id}`).
CREATE TABLE "attachments" (
    "id" SERIAL NOT NULL,
    "realm_id" INTEGER NOT NULL,
    "owner_id" INTEGER NOT NULL,
    "path_id" VARCHAR(300) NOT NULL,
    "file_name" VARCHAR(255) NOT NULL,
    "content_type" VARCHAR(255) NOT NULL,
    "size" INTEGER NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "attachments_pkey" PRIMARY KEY ("id")
);

CREATE UNIQUE INDEX "attachments_path_id_key" ON "attachments"("path_id");

CREATE INDEX "attachments_owner_id_idx" ON "attachments"("owner_id");

ALTER TABLE "attachments" ADD CONSTRAINT "attachments_realm_id_fkey" FOREIGN KEY ("realm_id") REFERENCES "realms"("id") ON DELETE CASCADE ON UPDATE CASCADE;

ALTER TABLE "attachments" ADD CONSTRAINT "attachments_owner_id_fkey" FOREIGN KEY ("owner_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- The messages that link to a file: who may see one of them may fetch the file.
CREATE TABLE "attachment_messages" (
    "attachment_id" INTEGER NOT NULL,
    "message_id" INTEGER NOT NULL,

    CONSTRAINT "attachment_messages_pkey" PRIMARY KEY ("attachment_id","message_id")
);

CREATE INDEX "attachment_messages_message_id_idx" ON "attachment_messages"("message_id");

ALTER TABLE "attachment_messages" ADD CONSTRAINT "attachment_messages_attachment_id_fkey" FOREIGN KEY ("attachment_id") REFERENCES "attachments"("id") ON DELETE CASCADE ON UPDATE CASCADE;

ALTER TABLE "attachment_messages" ADD CONSTRAINT "attachment_messages_message_id_fkey" FOREIGN KEY ("message_id") REFERENCES "messages"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Server-wide secrets, made by the first replica that needs one (the key that
-- signs temporary file URLs), so that every replica shares them without configuration.
CREATE TABLE "server_secrets" (
    "name" VARCHAR(60) NOT NULL,
    "value" BYTEA NOT NULL,

    CONSTRAINT "server_secrets_pkey" PRIMARY KEY ("name")
);
