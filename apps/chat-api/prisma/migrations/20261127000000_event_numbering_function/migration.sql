-- A numbering round of the event log in one statement (issue 25): before,
-- a round was four (BEGIN, the sequencer's advisory lock, the numbering,
-- COMMIT), and every request that writes events waits for one. Called as
-- `SELECT * FROM chat_number_events(batch, lock, channel)` outside any
-- transaction, it runs in the statement's own. The function is VOLATILE, so
-- its second statement takes a snapshot after the lock is held: it sees
-- every event the previous round numbered. It gives the committed events
-- without a number the next ones, in the order they were written (each
-- taking its span), NOTIFYs `seq:` and the new last number on `channel`, and
-- returns the events it numbered, so that the replica that ran the round
-- holds them without reading them back.
CREATE FUNCTION "chat_number_events"("batch" INTEGER, "lock" BIGINT, "channel" TEXT)
RETURNS TABLE (
    "seq" DOUBLE PRECISION,
    "span" INTEGER,
    "user_ids" INTEGER[],
    "event_type" VARCHAR(64),
    "payload" JSONB
)
LANGUAGE sql VOLATILE AS $$
SELECT pg_advisory_xact_lock("lock");
WITH todo AS (
    SELECT id, sum(span) OVER (ORDER BY id) AS upto
    FROM event_log WHERE seq IS NULL ORDER BY id LIMIT "batch"
),
counter AS (SELECT last_seq FROM event_sequencer WHERE id = 1),
numbered AS (
    UPDATE event_log SET seq = counter.last_seq + todo.upto
    FROM todo, counter WHERE event_log.id = todo.id
    RETURNING event_log.seq, event_log.span, event_log.user_ids, event_log.event_type,
              event_log.payload
),
moved AS (
    UPDATE event_sequencer SET last_seq = last_seq + (SELECT max(upto) FROM todo)
    WHERE id = 1 AND EXISTS (SELECT 1 FROM todo)
    RETURNING last_seq
),
told AS (SELECT pg_notify("channel", 'seq:' || last_seq) AS sent FROM moved)
SELECT numbered.seq::float8, numbered.span, numbered.user_ids, numbered.event_type,
       numbered.payload
FROM numbered, told
ORDER BY numbered.seq;
$$;
