-- Deploy history-search:purge to pg
-- The procedure lives in db/functions/purge.sql.
-- Reworked after v0.2.0: Citus: every statement names the tenant (tenant_key, the distribution column), so each runs on one shard
BEGIN;
SET LOCAL ROLE history_owner;

\ir ../functions/purge.sql

RESET ROLE;
COMMIT;
