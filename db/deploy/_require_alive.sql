-- Deploy history-search:_require_alive to pg
-- The function lives in db/functions/_require_alive.sql.
-- Reworked after v0.1.0: Writes to one message serialise: lock the message row, then read its current event.
-- Reworked after v0.2.0: Citus: every statement names the tenant (tenant_key, the distribution column), so each runs on one shard
BEGIN;
SET LOCAL ROLE history_owner;

-- The signature gained the tenant: no overload of the old one may remain.
DROP FUNCTION history._require_alive(bigint, text);

\ir ../functions/_require_alive.sql

RESET ROLE;
COMMIT;
