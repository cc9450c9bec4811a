-- Deploy history-search:post_message to pg
-- The function lives in db/functions/post_message.sql.
BEGIN;
SET LOCAL ROLE history_owner;

\ir ../functions/post_message.sql

RESET ROLE;
COMMIT;
