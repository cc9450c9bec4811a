-- Deploy history-search:purge to pg
-- The procedure lives in db/functions/purge.sql.
-- Reworked after v0.2.0: Citus: every statement names the tenant (tenant_key, the distribution column), so each runs on one shard
-- Reworked after v0.3.0: Deletes the purged runs' tokens (run_tokens)
BEGIN;
SET LOCAL ROLE history_owner;

\ir ../functions/purge.sql

RESET ROLE;
COMMIT;
