-- Deploy history-search:begin_run to pg
-- The function lives in db/functions/begin_run.sql.
-- Reworked after v0.2.0: Tenants: names ids within a tenant (p_tenant, the default tenant when omitted)
BEGIN;
SET LOCAL ROLE history_owner;

-- The signature gained p_tenant: no overload of the old one may remain.
DROP FUNCTION history.begin_run(text, text, text, text, text[], text[]);

\ir ../functions/begin_run.sql

RESET ROLE;
COMMIT;
