-- Deploy history-search:_score to pg
-- requires: core_tables
-- The function lives in db/functions/_score.sql.
BEGIN;
SET LOCAL ROLE history_owner;

\ir ../functions/_score.sql

RESET ROLE;
COMMIT;
