-- Deploy history-search:_hit_neighbours to pg
-- requires: search_stage_types _ineligible_by
-- The function lives in db/functions/_hit_neighbours.sql.
-- Reworked after v0.3.0: Citus: every statement names the tenant (tenant_key, the distribution column), so each runs on one shard
BEGIN;
SET LOCAL ROLE history_owner;

\ir ../functions/_hit_neighbours.sql

RESET ROLE;
COMMIT;
