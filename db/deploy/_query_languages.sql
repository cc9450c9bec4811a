-- Deploy history-search:_query_languages to pg
-- The function lives in db/functions/_query_languages.sql.
-- Reworked after v0.2.0: Tenants: names ids within a tenant (p_tenant, the default tenant when omitted)
BEGIN;
SET LOCAL ROLE history_owner;

-- The signature gained p_tenant: no overload of the old one may remain.
DROP FUNCTION history._query_languages();

\ir ../functions/_query_languages.sql

RESET ROLE;
COMMIT;
