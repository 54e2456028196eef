-- Every modern client of a realm asks for its presences each minute, and each
-- answer names nearly every user of the realm (those seen since the client's
-- last answer: everyone who pinged). Made from the times, each user's entry
-- cost the database its own text conversions at every answer: 4.8-9.0 ms
-- for a 2,000-user realm (pgbench), and a third of PostgreSQL's statement
-- time in the load simulator ramped to 1,250 users (issue 25). Each row now carries its entry of that answer, in
-- the bytes JSON.stringify gives ('"<user_id>":{"active_timestamp":<s>,
-- "idle_timestamp":<s>}', whole seconds since the epoch, 0 for an activity
-- time never set), made once per write by this trigger: any statement that
-- writes a row keeps it right, and no code writes it. The answer joins the
-- entries (2.8-6.0 ms for the same realm, alternated with the old one).
ALTER TABLE "presences" ADD COLUMN "slim_entry" TEXT NOT NULL DEFAULT '';

CREATE FUNCTION chat_presence_slim_entry() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  NEW.slim_entry := '"' || NEW.user_id || '":{"active_timestamp":'
    || coalesce(floor(extract(epoch FROM NEW.last_active_time)), 0)::int
    || ',"idle_timestamp":' || floor(extract(epoch FROM NEW.last_connected_time))::int
    || '}';
  RETURN NEW;
END
$$;

CREATE TRIGGER presences_slim_entry
BEFORE INSERT OR UPDATE ON presences
FOR EACH ROW EXECUTE FUNCTION chat_presence_slim_entry();

-- The rows written before this migration get theirs.
UPDATE presences SET slim_entry = '';
