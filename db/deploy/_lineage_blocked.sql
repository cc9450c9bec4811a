-- Deploy history-search:_lineage_blocked to pg
-- The function lives in db/functions/_lineage_blocked.sql.
-- Reworked after v0.3.0: Citus: every statement names the tenant (tenant_key, the distribution column), so each runs on one shard
BEGIN;
SET LOCAL ROLE history_owner;

\ir ../functions/_lineage_blocked.sql

RESET ROLE;
COMMIT;
