-- Deploy history-search:upsert_account to pg
-- The function lives in db/functions/upsert_account.sql.
BEGIN;
SET LOCAL ROLE history_owner;

\ir ../functions/upsert_account.sql

RESET ROLE;
COMMIT;
