-- Deploy history-search:_lock_open_run to pg
-- The function lives in db/functions/_lock_open_run.sql.
-- Reworked after v0.2.0: Errors name the run by a digest of its token, never the token
BEGIN;
SET LOCAL ROLE history_owner;

\ir ../functions/_lock_open_run.sql

RESET ROLE;
COMMIT;
