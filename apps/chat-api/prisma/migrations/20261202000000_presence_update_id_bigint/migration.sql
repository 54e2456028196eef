-- Presence update numbers come from one sequence for every realm, and an
-- upsert that updates takes two: at 2,000 users pinging once a minute, an
-- int4 column runs out in about a year, and then every presence write fails.
-- The sequence is bigint already; the column follows it.
ALTER TABLE "presences" ALTER COLUMN "last_update_id" TYPE BIGINT;
