-- Deploy history-search:begin_run to pg
-- The function lives in db/functions/begin_run.sql.
BEGIN;
SET LOCAL ROLE history_owner;

\ir ../functions/begin_run.sql

RESET ROLE;
COMMIT;
