-- Deploy history-search:_run_scope to pg
-- requires: search_stage_types _audience_windows _member_windows tenant_accounts
-- The function lives in db/functions/_run_scope.sql.
-- Reworked after v0.3.0: Citus: every statement names the tenant (tenant_key, the distribution column), so each runs on one shard
BEGIN;
SET LOCAL ROLE history_owner;

\ir ../functions/_run_scope.sql

RESET ROLE;
COMMIT;
