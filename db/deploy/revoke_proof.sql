-- Deploy history-search:revoke_proof to pg
-- The function lives in db/functions/revoke_proof.sql.
-- Reworked after v0.2.0: Tenants: names ids within a tenant (p_tenant, the default tenant when omitted)
BEGIN;
SET LOCAL ROLE history_owner;

-- The signature gained p_tenant: no overload of the old one may remain.
DROP FUNCTION history.revoke_proof(text, timestamptz);

\ir ../functions/revoke_proof.sql

RESET ROLE;
COMMIT;
