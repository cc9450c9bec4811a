-- Deploy history-search:upsert_conversation to pg
-- The function lives in db/functions/upsert_conversation.sql.
BEGIN;
SET LOCAL ROLE history_owner;

\ir ../functions/upsert_conversation.sql

RESET ROLE;
COMMIT;
