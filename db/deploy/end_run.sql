-- Deploy history-search:end_run to pg
-- The function lives in db/functions/end_run.sql.
BEGIN;
SET LOCAL ROLE history_owner;

\ir ../functions/end_run.sql

RESET ROLE;
COMMIT;
