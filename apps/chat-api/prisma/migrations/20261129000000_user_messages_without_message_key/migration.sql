-- A channel message writes one `user_messages` row per subscriber, in the
-- statement that writes the message (issue 25). The foreign key from
-- `message_id` to `messages` checked each row on its own: for a
-- thousand-member channel, a thousand lookups of the same new message, about
-- half of the statement's time (15 ms with the key, 7-8.5 ms without, in
-- EXPLAIN ANALYZE on PostgreSQL 15).
--
-- What the key did stays done:
-- - rows go with their message: this trigger deletes them, once per
--   statement that deletes messages (a message's deletion, a retention sweep,
--   a channel's or realm's deletion cascading to its messages);
-- - no row names a message that does not exist: rows are written by the
--   statement that writes their message, or for messages the same transaction
--   has just updated, and so holds locked (a move to another channel).
ALTER TABLE "user_messages" DROP CONSTRAINT "user_messages_message_id_fkey";

CREATE FUNCTION chat_delete_user_messages() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM user_messages WHERE message_id IN (SELECT id FROM deleted_messages);
  RETURN NULL;
END
$$;

CREATE TRIGGER messages_delete_user_messages
AFTER DELETE ON messages
REFERENCING OLD TABLE AS deleted_messages
FOR EACH STATEMENT EXECUTE FUNCTION chat_delete_user_messages();
