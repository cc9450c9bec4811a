-- Deploy history-search:erase_account to pg
-- The function lives in db/functions/erase_account.sql.
BEGIN;
SET LOCAL ROLE history_owner;

\ir ../functions/erase_account.sql

RESET ROLE;
COMMIT;
