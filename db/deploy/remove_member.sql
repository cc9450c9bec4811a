-- Deploy history-search:remove_member to pg
-- The function lives in db/functions/remove_member.sql.
-- Reworked after v0.2.0: Tenants: names ids within a tenant (p_tenant, the default tenant when omitted)
BEGIN;
SET LOCAL ROLE history_owner;

-- The signature gained p_tenant: no overload of the old one may remain.
DROP FUNCTION history.remove_member(text, text, timestamptz);

\ir ../functions/remove_member.sql

RESET ROLE;
COMMIT;
