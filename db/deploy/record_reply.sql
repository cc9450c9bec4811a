-- Deploy history-search:record_reply to pg
-- The function lives in db/functions/record_reply.sql.
BEGIN;
SET LOCAL ROLE history_owner;

\ir ../functions/record_reply.sql

RESET ROLE;
COMMIT;
