-- Deploy history-search:_newest_matches_slices to pg
-- requires: core_tables _match_filters
-- The function lives in db/functions/_newest_matches_slices.sql.
BEGIN;
SET LOCAL ROLE history_owner;

\ir ../functions/_newest_matches_slices.sql

RESET ROLE;
COMMIT;
