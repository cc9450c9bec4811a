-- Deploy history-search:link_identity to pg
-- The function lives in db/functions/link_identity.sql.
-- Reworked after v0.1.0: A proof naming an agent account is HS001.
-- Reworked after v0.2.0: Tenants: names ids within a tenant (p_tenant, the default tenant when omitted)
BEGIN;
SET LOCAL ROLE history_owner;

-- The signature gained p_tenant: no overload of the old one may remain.
DROP FUNCTION history.link_identity(text, text, text, timestamptz);

\ir ../functions/link_identity.sql

RESET ROLE;
COMMIT;
