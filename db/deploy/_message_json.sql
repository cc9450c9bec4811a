-- Deploy history-search:_message_json to pg
-- The function lives in db/functions/_message_json.sql.
BEGIN;
SET LOCAL ROLE history_owner;

\ir ../functions/_message_json.sql

RESET ROLE;
COMMIT;
