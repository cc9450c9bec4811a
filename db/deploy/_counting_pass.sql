-- Deploy history-search:_counting_pass to pg
-- requires: search_stage_types _newest_matches _ineligible_by _member_windows
-- The function lives in db/functions/_counting_pass.sql.
-- Reworked after v0.3.0: Citus: every statement names the tenant (tenant_key, the distribution column), so each runs on one shard
BEGIN;
SET LOCAL ROLE history_owner;

\ir ../functions/_counting_pass.sql

RESET ROLE;
COMMIT;
