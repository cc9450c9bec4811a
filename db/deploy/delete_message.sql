-- Deploy history-search:delete_message to pg
-- The function lives in db/functions/delete_message.sql.
-- Reworked after v0.2.0: Tenants: names ids within a tenant (p_tenant, the default tenant when omitted)
BEGIN;
SET LOCAL ROLE history_owner;

-- The signature gained p_tenant: no overload of the old one may remain.
DROP FUNCTION history.delete_message(text, timestamptz);

\ir ../functions/delete_message.sql

RESET ROLE;
COMMIT;
