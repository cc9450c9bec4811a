-- Deploy history-search:_lineage_passes to pg
-- The function lives in db/functions/_lineage_passes.sql.
-- Reworked after v0.3.0: Citus: every statement names the tenant (tenant_key, the distribution column), so each runs on one shard
BEGIN;
SET LOCAL ROLE history_owner;

\ir ../functions/_lineage_passes.sql

RESET ROLE;
COMMIT;
