-- Deploy history-search:_delivery_audience to pg
-- The function lives in db/functions/_delivery_audience.sql.
-- Reworked after v0.1.0: The delivery audience counts the members open now (a future join too) and those whose membership covers the reply's sent_at.
-- Reworked after v0.2.0: Citus: every statement names the tenant (tenant_key, the distribution column), so each runs on one shard
BEGIN;
SET LOCAL ROLE history_owner;

\ir ../functions/_delivery_audience.sql

RESET ROLE;
COMMIT;
