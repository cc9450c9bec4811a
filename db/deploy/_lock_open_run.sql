-- Deploy history-search:_lock_open_run to pg
-- The function lives in db/functions/_lock_open_run.sql.
BEGIN;
SET LOCAL ROLE history_owner;

\ir ../functions/_lock_open_run.sql

RESET ROLE;
COMMIT;
