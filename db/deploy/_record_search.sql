-- Deploy history-search:_record_search to pg
-- requires: search_stage_types run_tables schema _normalise_query _relied_proofs
-- The function lives in db/functions/_record_search.sql.
-- Reworked after v0.3.0: Citus: every statement names the tenant (tenant_key, the distribution column), so each runs on one shard
-- Reworked after v0.4.0: The audit's reasons name the window stage's components: window_coverage, feedback
BEGIN;
SET LOCAL ROLE history_owner;

\ir ../functions/_record_search.sql

RESET ROLE;
COMMIT;
