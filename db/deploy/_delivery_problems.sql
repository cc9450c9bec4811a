-- Deploy history-search:_delivery_problems to pg
-- The function lives in db/functions/_delivery_problems.sql.
-- Reworked after v0.2.0: Citus: every statement names the tenant (tenant_key, the distribution column), so each runs on one shard
-- Reworked after v0.3.0: Citus: every statement names the tenant (tenant_key, the distribution column), so each runs on one shard
-- Reworked after v0.4.0: Set-based: the evidence and its checks in a few statements for the whole run, not several per evidence row (295 ms a reply on Citus, 10 ms on one server)
BEGIN;
SET LOCAL ROLE history_owner;

\ir ../functions/_delivery_problems.sql

RESET ROLE;
COMMIT;
