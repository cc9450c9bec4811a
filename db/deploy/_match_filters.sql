-- Deploy history-search:_match_filters to pg
-- requires: core_tables _lineage_blocked
-- The function lives in db/functions/_match_filters.sql.
-- Reworked after v0.3.0: Citus: every statement names the tenant (tenant_key, the distribution column), so each runs on one shard
BEGIN;
SET LOCAL ROLE history_owner;

\ir ../functions/_match_filters.sql

RESET ROLE;
COMMIT;
