-- Deploy history-search:_account_key to pg
-- The function lives in db/functions/_account_key.sql.
-- Reworked after v0.2.0: Tenants: names ids within a tenant (p_tenant, the default tenant when omitted)
BEGIN;
SET LOCAL ROLE history_owner;

-- The signature gained p_tenant: no overload of the old one may remain.
DROP FUNCTION history._account_key(text, text);

\ir ../functions/_account_key.sql

RESET ROLE;
COMMIT;
