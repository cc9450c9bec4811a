-- Deploy history-search:_conversation_key to pg
-- The function lives in db/functions/_conversation_key.sql.
BEGIN;
SET LOCAL ROLE history_owner;

\ir ../functions/_conversation_key.sql

RESET ROLE;
COMMIT;
