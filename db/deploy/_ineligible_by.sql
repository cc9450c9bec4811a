-- Deploy history-search:_ineligible_by to pg
-- requires: core_tables _lineage_blocked
-- The function lives in db/functions/_ineligible_by.sql.
-- Reworked after v0.3.0: Citus: every statement names the tenant (tenant_key, the distribution column), so each runs on one shard
BEGIN;
SET LOCAL ROLE history_owner;

\ir ../functions/_ineligible_by.sql

RESET ROLE;
COMMIT;
