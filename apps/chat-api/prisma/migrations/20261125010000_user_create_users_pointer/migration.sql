-- Zulip's server-granted permission to create accounts through the API
-- (POST /users), given by the admin CLI (`set-can-create-users`), never by the API.
ALTER TABLE "users" ADD COLUMN "can_create_users" BOOLEAN NOT NULL DEFAULT false;

-- The legacy message pointer (GET and POST /users/me/pointer, which Zulip
-- removed in 2020 and zulip-js still calls): the furthest message id the
-- user's clients reported reading up to; -1 before any.
ALTER TABLE "users" ADD COLUMN "pointer" INTEGER NOT NULL DEFAULT -1;
