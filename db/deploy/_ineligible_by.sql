-- Deploy history-search:_ineligible_by to pg
-- requires: core_tables _lineage_blocked
-- The function lives in db/functions/_ineligible_by.sql.
BEGIN;
SET LOCAL ROLE history_owner;

\ir ../functions/_ineligible_by.sql

RESET ROLE;
COMMIT;
