-- Deploy history-search:_audience_windows to pg
-- The function lives in db/functions/_audience_windows.sql.
-- Reworked after v0.3.0: Citus: every statement names the tenant (tenant_key, the distribution column), so each runs on one shard
BEGIN;
SET LOCAL ROLE history_owner;

\ir ../functions/_audience_windows.sql

RESET ROLE;
COMMIT;
