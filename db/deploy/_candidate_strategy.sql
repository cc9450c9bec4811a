-- Deploy history-search:_candidate_strategy to pg
-- requires: core_tables
-- The function lives in db/functions/_candidate_strategy.sql.
BEGIN;
SET LOCAL ROLE history_owner;

\ir ../functions/_candidate_strategy.sql

RESET ROLE;
COMMIT;
