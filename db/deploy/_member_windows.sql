-- Deploy history-search:_member_windows to pg
-- The function lives in db/functions/_member_windows.sql.
-- Reworked after v0.3.0: Citus: every statement names the tenant (tenant_key, the distribution column), so each runs on one shard
BEGIN;
SET LOCAL ROLE history_owner;

\ir ../functions/_member_windows.sql

RESET ROLE;
COMMIT;
