-- Deploy history-search:_match_filters to pg
-- requires: core_tables _lineage_blocked
-- The function lives in db/functions/_match_filters.sql.
BEGIN;
SET LOCAL ROLE history_owner;

\ir ../functions/_match_filters.sql

RESET ROLE;
COMMIT;
