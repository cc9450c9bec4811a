-- Deploy history-search:run_status to pg
-- requires: run_tables
-- The function lives in db/functions/run_status.sql.
-- Reworked after v0.3.0: Finds the run's tenant in run_tokens (on Citus a local read, not one of every shard)
BEGIN;
SET LOCAL ROLE history_owner;

\ir ../functions/run_status.sql

RESET ROLE;
COMMIT;
