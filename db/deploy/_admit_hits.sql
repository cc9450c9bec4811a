-- Deploy history-search:_admit_hits to pg
-- requires: search_stage_types
-- The function lives in db/functions/_admit_hits.sql.
BEGIN;
SET LOCAL ROLE history_owner;

\ir ../functions/_admit_hits.sql

RESET ROLE;
COMMIT;
