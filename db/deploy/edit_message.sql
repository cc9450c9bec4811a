-- Deploy history-search:edit_message to pg
-- The function lives in db/functions/edit_message.sql.
BEGIN;
SET LOCAL ROLE history_owner;

\ir ../functions/edit_message.sql

RESET ROLE;
COMMIT;
