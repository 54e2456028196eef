-- A registration's queue in one statement (issue 25): before, it was four
-- (BEGIN, the user's row lock, the queue's statement, COMMIT), at every
-- client's start. Called as `SELECT chat_create_queue(...)` outside any
-- transaction, it runs in the statement's own. First it locks the user's
-- row (NO KEY UPDATE: rows that merely reference the user do not wait), so
-- that concurrent registrations of one user run one after the other; the
-- function is VOLATILE, so its second statement takes a snapshot after the
-- lock is held and counts the queues those registrations made. That
-- statement deletes the user's queues beyond the newest `keep` (the ones
-- polled least recently, each NOTIFYed on `channel` as `gone:` and its id),
-- inserts the new queue at the log's last number, and returns that number:
-- the queue receives the events numbered after it.
CREATE FUNCTION "chat_create_queue"(
    "queue" VARCHAR(64),
    "owner" INTEGER,
    "realm" INTEGER,
    "types" TEXT[],
    "all_types" BOOLEAN,
    "opts" JSONB,
    "keep" INTEGER,
    "channel" TEXT
)
RETURNS DOUBLE PRECISION
LANGUAGE sql VOLATILE AS $$
SELECT id FROM users WHERE id = "owner" FOR NO KEY UPDATE;
WITH excess AS (
    SELECT id FROM event_queues WHERE user_id = "owner"
    ORDER BY last_poll_time DESC, date_created DESC OFFSET "keep"
),
gone AS (DELETE FROM event_queues WHERE id IN (SELECT id FROM excess) RETURNING id),
told AS (SELECT pg_notify("channel", 'gone:' || id) AS sent FROM gone),
made AS (
    INSERT INTO event_queues (id, user_id, realm_id, event_types, all_event_types, options,
                              last_event_id)
    SELECT "queue", "owner", "realm", "types", "all_types", "opts", last_seq
    FROM event_sequencer WHERE id = 1
    RETURNING last_event_id
)
SELECT made.last_event_id::float8 FROM made WHERE (SELECT count(*) FROM told) >= 0;
$$;
