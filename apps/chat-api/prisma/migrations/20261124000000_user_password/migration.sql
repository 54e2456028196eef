-- Password login (POST /fetch_api_key): the scrypt hash of a user's password,
-- or NULL when the account has none.
ALTER TABLE "users" ADD COLUMN "password" TEXT;
