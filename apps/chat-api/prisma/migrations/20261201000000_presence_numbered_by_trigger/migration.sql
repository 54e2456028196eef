-- Each replica keeps a board of a realm's presences in memory and answers
-- the modern presence query from it (issue 25: that statement was a third of
-- PostgreSQL's time in the load simulator), reading from the database only
-- the rows numbered since its last read. For that, every change a client
-- could see must take a new number:
--
-- * Every write of a presence row takes the next number, whatever statement
--   makes it (so a row written by hand, or by a statement that forgot to
--   number it, is read too). The statements no longer number rows
--   themselves. An upsert that updates takes two numbers (the proposed row's,
--   then the update's): numbers may skip, as clients are told they may.
-- * A user's deactivation or reactivation (or a change of `is_bot`) renumbers
--   their presence row: whether it is shown changed.
DROP TRIGGER presences_slim_entry ON presences;
DROP FUNCTION chat_presence_slim_entry();

CREATE FUNCTION chat_presence_write() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  NEW.last_update_id := nextval('presence_update_id_seq');
  NEW.slim_entry := '"' || NEW.user_id || '":{"active_timestamp":'
    || coalesce(floor(extract(epoch FROM NEW.last_active_time)), 0)::int
    || ',"idle_timestamp":' || floor(extract(epoch FROM NEW.last_connected_time))::int
    || '}';
  RETURN NEW;
END
$$;

CREATE TRIGGER presences_write
BEFORE INSERT OR UPDATE ON presences
FOR EACH ROW EXECUTE FUNCTION chat_presence_write();

CREATE FUNCTION chat_presence_shown() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  -- The update itself changes nothing; the trigger above renumbers the row.
  UPDATE presences SET last_update_id = last_update_id WHERE user_id = NEW.id;
  RETURN NULL;
END
$$;

CREATE TRIGGER users_presence_shown
AFTER UPDATE OF is_active, is_bot ON users
FOR EACH ROW
WHEN (OLD.is_active IS DISTINCT FROM NEW.is_active OR OLD.is_bot IS DISTINCT FROM NEW.is_bot)
EXECUTE FUNCTION chat_presence_shown();
