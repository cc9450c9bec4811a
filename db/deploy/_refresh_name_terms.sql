-- Deploy history-search:_refresh_name_terms to pg
-- requires: core_tables _query_terms _query_languages
-- The function lives in db/functions/_refresh_name_terms.sql.
-- Reworked after v0.2.0: Tenants: names ids within a tenant (p_tenant, the default tenant when omitted)
BEGIN;
SET LOCAL ROLE history_owner;

-- The signature gained the tenant: no overload of the old one may remain.
DROP FUNCTION history._refresh_name_terms(bigint[], boolean);

\ir ../functions/_refresh_name_terms.sql

RESET ROLE;
COMMIT;
