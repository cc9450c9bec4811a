-- Deploy history-search:erase_account to pg
-- The function lives in db/functions/erase_account.sql.
-- Reworked after v0.2.0: Tenants: names ids within a tenant (p_tenant, the default tenant when omitted)
BEGIN;
SET LOCAL ROLE history_owner;

-- The signature gained p_tenant: no overload of the old one may remain.
DROP FUNCTION history.erase_account(text, timestamptz);

\ir ../functions/erase_account.sql

RESET ROLE;
COMMIT;
