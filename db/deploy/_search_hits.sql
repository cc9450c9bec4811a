-- Deploy history-search:_search_hits to pg
-- requires: search_stage_types _message_json
-- The function lives in db/functions/_search_hits.sql.
-- Reworked after v0.3.0: Citus: every statement names the tenant (tenant_key, the distribution column), so each runs on one shard
-- Reworked after v0.4.0: Reasons name the window stage's components: window_coverage, feedback
BEGIN;
SET LOCAL ROLE history_owner;

\ir ../functions/_search_hits.sql

RESET ROLE;
COMMIT;
