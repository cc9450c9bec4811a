-- Deploy history-search:_record_search to pg
-- requires: search_stage_types run_tables schema _normalise_query _relied_proofs
-- The function lives in db/functions/_record_search.sql.
BEGIN;
SET LOCAL ROLE history_owner;

\ir ../functions/_record_search.sql

RESET ROLE;
COMMIT;
