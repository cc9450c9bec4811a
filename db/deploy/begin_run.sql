-- Deploy history-search:begin_run to pg
-- The function lives in db/functions/begin_run.sql.
-- Reworked after v0.2.0: Tenants: names ids within a tenant (p_tenant, the default tenant when omitted)
-- Reworked after v0.3.0: Records the run token's tenant (run_tokens)
BEGIN;
SET LOCAL ROLE history_owner;

\ir ../functions/begin_run.sql

RESET ROLE;
COMMIT;
