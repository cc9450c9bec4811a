-- Deploy history-search:_counting_pass to pg
-- requires: search_stage_types _newest_matches _ineligible_by _member_windows
-- The function lives in db/functions/_counting_pass.sql.
BEGIN;
SET LOCAL ROLE history_owner;

\ir ../functions/_counting_pass.sql

RESET ROLE;
COMMIT;
