-- Deploy history-search:run_status to pg
-- requires: run_tables
-- The function lives in db/functions/run_status.sql.
BEGIN;
SET LOCAL ROLE history_owner;

\ir ../functions/run_status.sql

RESET ROLE;
COMMIT;
