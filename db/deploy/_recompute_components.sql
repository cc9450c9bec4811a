-- Deploy history-search:_recompute_components to pg
-- The function lives in db/functions/_recompute_components.sql.
-- Reworked after v0.1.0: Links join person accounts only: an agent account is always its own component.
-- Reworked after v0.2.0: Citus: every statement names the tenant (tenant_key, the distribution column), so each runs on one shard
BEGIN;
SET LOCAL ROLE history_owner;

-- The signature gained the tenant: no overload of the old one may remain.
DROP FUNCTION history._recompute_components(bigint[]);

\ir ../functions/_recompute_components.sql

RESET ROLE;
COMMIT;
