-- Deploy history-search:delete_message to pg
-- The function lives in db/functions/delete_message.sql.
BEGIN;
SET LOCAL ROLE history_owner;

\ir ../functions/delete_message.sql

RESET ROLE;
COMMIT;
