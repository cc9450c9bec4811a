-- Deploy history-search:_newest_matches_slices to pg
-- requires: core_tables _match_filters
-- The function lives in db/functions/_newest_matches_slices.sql.
-- Reworked after v0.3.0: Citus: every statement names the tenant (tenant_key, the distribution column), so each runs on one shard
BEGIN;
SET LOCAL ROLE history_owner;

\ir ../functions/_newest_matches_slices.sql

RESET ROLE;
COMMIT;
