-- Deploy history-search:_lock_open_run to pg
-- The function lives in db/functions/_lock_open_run.sql.
-- Reworked after v0.2.0: Errors name the run by its label, never its token; HS002 while an end_run of the run is under way (a FOR UPDATE NOWAIT probe)
-- Reworked after v0.3.0: Finds the run's tenant in run_tokens (on Citus a local read, not one of every shard)
BEGIN;
SET LOCAL ROLE history_owner;

\ir ../functions/_lock_open_run.sql

RESET ROLE;
COMMIT;
