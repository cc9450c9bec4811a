-- Deploy history-search:end_run to pg
-- The function lives in db/functions/end_run.sql.
-- Reworked after 0.1.0: also drops the run's unrevealed hits.
-- Reworked after v0.2.0: end_run announces the end with a key-share lock on the run row before it waits for it: searches queued behind a burst stop at once
-- Reworked after v0.3.0: Finds the run's tenant in run_tokens (on Citus a local read, not one of every shard)
BEGIN;
SET LOCAL ROLE history_owner;

\ir ../functions/end_run.sql

RESET ROLE;
COMMIT;
