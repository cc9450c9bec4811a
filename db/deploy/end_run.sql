-- Deploy history-search:end_run to pg
-- The function lives in db/functions/end_run.sql.
-- Reworked after 0.1.0: also drops the run's unrevealed hits.
BEGIN;
SET LOCAL ROLE history_owner;

\ir ../functions/end_run.sql

RESET ROLE;
COMMIT;
