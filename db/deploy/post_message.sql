-- Deploy history-search:post_message to pg
-- The function lives in db/functions/post_message.sql.
-- Reworked after v0.3.0: Citus ingest: one read statement and three or four writes instead of eleven round trips (keys drawn first, the projection row written directly)
BEGIN;
SET LOCAL ROLE history_owner;

\ir ../functions/post_message.sql

RESET ROLE;
COMMIT;
