-- Deploy history-search:_hit_neighbours to pg
-- requires: search_stage_types _ineligible_by
-- The function lives in db/functions/_hit_neighbours.sql.
BEGIN;
SET LOCAL ROLE history_owner;

\ir ../functions/_hit_neighbours.sql

RESET ROLE;
COMMIT;
