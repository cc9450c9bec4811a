-- Deploy history-search:_delivery_problems to pg
-- The function lives in db/functions/_delivery_problems.sql.
-- Reworked after v0.2.0: Citus: every statement names the tenant (tenant_key, the distribution column), so each runs on one shard
BEGIN;
SET LOCAL ROLE history_owner;

-- The signature gained the tenant: no overload of the old one may remain.
DROP FUNCTION history._delivery_problems(bigint, bigint, bigint[]);

\ir ../functions/_delivery_problems.sql

RESET ROLE;
COMMIT;
