-- Deploy history-search:_default_audience to pg
-- The function lives in db/functions/_default_audience.sql.
-- Reworked after v0.1.0: A membership whose since is ahead of the clock counts as open.
-- Reworked after v0.2.0: Citus: every statement names the tenant (tenant_key, the distribution column), so each runs on one shard
BEGIN;
SET LOCAL ROLE history_owner;

-- The signature gained the tenant: no overload of the old one may remain.
DROP FUNCTION history._default_audience(bigint, bigint, timestamptz);

\ir ../functions/_default_audience.sql

RESET ROLE;
COMMIT;
