-- Deploy history-search:_message_key to pg
-- The function lives in db/functions/_message_key.sql.
BEGIN;
SET LOCAL ROLE history_owner;

\ir ../functions/_message_key.sql

RESET ROLE;
COMMIT;
