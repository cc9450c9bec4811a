-- Deploy history-search:_account_key to pg
-- The function lives in db/functions/_account_key.sql.
BEGIN;
SET LOCAL ROLE history_owner;

\ir ../functions/_account_key.sql

RESET ROLE;
COMMIT;
